# expect: MT_ERR_SHAPE 3:18 the weight of 'conv2d' must have 2 input channels per group (6 channels in 3 groups), but 'w' has shape (6, 3, 3, 3)
def f(x: Tensor((1, 6, 8, 8), "float32"), w: Tensor((6, 3, 3, 3), "float32")):
    return conv2d(x, w, groups=3)
