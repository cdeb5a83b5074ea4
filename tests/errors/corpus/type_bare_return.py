# expect: MT_ERR_TYPE 3:5 a kernel must return a value
def f(a: Tensor((2, 3), "float32")):
    return
