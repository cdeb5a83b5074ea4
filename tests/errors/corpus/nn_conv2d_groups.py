# expect: MT_ERR_SHAPE 3:18 groups=4 of 'conv2d' must divide the input channels (6, of 'x') and the output channels (4, of 'w')
def f(x: Tensor((1, 6, 8, 8), "float32"), w: Tensor((4, 2, 3, 3), "float32")):
    return conv2d(x, w, groups=4)
