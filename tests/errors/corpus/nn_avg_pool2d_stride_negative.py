# expect: MT_ERR_SHAPE 3:22 stride of 'avg_pool2d' must be positive, got (-1, -1)
def f(x: Tensor((1, 3, 8, 8), "float32")):
    return avg_pool2d(x, 2, stride=-1)
