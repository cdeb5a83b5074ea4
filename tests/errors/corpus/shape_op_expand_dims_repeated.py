# expect: MT_ERR_SHAPE 3:22 repeated axis 1 in 'expand_dims'
def f(x: Tensor((2, 3), "float32")):
    out = expand_dims(x, (1, -3))
    return out
