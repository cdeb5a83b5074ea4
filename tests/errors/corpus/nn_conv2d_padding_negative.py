# expect: MT_ERR_SHAPE 3:18 padding of 'conv2d' must be non-negative, got (-1, -1)
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w, padding=-1)
