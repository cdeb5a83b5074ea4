# expect: MT_ERR_SHAPE 3:22 'avg_pool2d' needs a 4-D input (N, C, H, W), but 'x' has shape (8, 8)
def f(x: Tensor((8, 8), "float32")):
    return avg_pool2d(x, 2)
