# expect: MT_ERR_TYPE 3:29 'approximate' of 'gelu' must be "none" or "tanh", got "fast"
def f(x: Tensor((8,), "float32")):
    y = gelu(x, approximate="fast")
    return y
