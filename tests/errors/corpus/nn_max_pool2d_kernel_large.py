# expect: MT_ERR_SHAPE 3:22 the window of 'max_pool2d' spans 4 along the height, more than the padded input: 'x' has 1 and padding 1 on each side
def f(x: Tensor((1, 3, 1, 8), "float32")):
    return max_pool2d(x, (4, 2), padding=(1, 0))
