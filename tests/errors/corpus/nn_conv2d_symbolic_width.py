# expect: MT_ERR_UNSUPPORTED 3:18 'conv2d' needs constant channel and spatial dimensions, but 'x' has shape (1, 3, 8, w)
def f(x: Tensor((1, 3, 8, "w"), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w)
