# expect: MT_ERR_TYPE 2:10 annotation of 'a' must be Tensor(shape, dtype) or a scalar type such as float32
def f(a: 3):
    return a
