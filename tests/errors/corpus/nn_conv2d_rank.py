# expect: MT_ERR_SHAPE 3:18 'conv2d' needs a 4-D input (N, C, H, W), but 'x' has shape (3, 7, 9)
def f(x: Tensor((3, 7, 9), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w)
