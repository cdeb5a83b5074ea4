# expect: MT_ERR_TYPE 3:15 a string is not a tensor value
def f(a: Tensor((2, 3), "float32")):
    out = a + "one"
    return out
