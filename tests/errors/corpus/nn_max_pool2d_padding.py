# expect: MT_ERR_SHAPE 3:22 padding of 'max_pool2d' must be at most half the kernel, but the width has padding 2 and kernel 2
def f(x: Tensor((1, 3, 8, 8), "float32")):
    return max_pool2d(x, 2, padding=(0, 2))
