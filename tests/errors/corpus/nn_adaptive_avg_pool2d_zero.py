# expect: MT_ERR_SHAPE 3:31 output_size of 'adaptive_avg_pool2d' must be positive, got (0, 1)
def f(x: Tensor((1, 3, 8, 8), "float32")):
    return adaptive_avg_pool2d(x, (0, 1))
