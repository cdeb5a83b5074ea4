# expect: MT_ERR_SHAPE 3:18 cannot squeeze axis 1 of 'x' (shape (1, 3)): its size is 3, not 1
def f(x: Tensor((1, 3), "float32")):
    out = squeeze(x, -1)
    return out
