# expect: MT_ERR_SHAPE 3:18 the window of 'conv2d' spans 5 along the height (kernel 3, dilation 2), more than the padded input: 'x' has 4 and padding 0 on each side
def f(x: Tensor((1, 3, 4, 9), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w, dilation=2)
