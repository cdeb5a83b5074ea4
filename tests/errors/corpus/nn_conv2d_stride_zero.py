# expect: MT_ERR_SHAPE 3:18 stride of 'conv2d' must be positive, got (1, 0)
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w, stride=(1, 0))
