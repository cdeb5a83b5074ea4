# expect: MT_ERR_TYPE 3:29 'approximate' of 'gelu' must be a string
def f(x: Tensor((8,), "float32")):
    y = gelu(x, approximate=True)
    return y
