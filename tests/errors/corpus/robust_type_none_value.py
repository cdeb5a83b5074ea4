# expect: MT_ERR_TYPE 3:16 None is not a tensor value
def f(a: Tensor((2, 3), "float32")):
    return a + None
