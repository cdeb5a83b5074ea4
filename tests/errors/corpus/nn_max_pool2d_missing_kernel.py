# expect: MT_ERR_TYPE 3:22 'max_pool2d' missing required argument 'kernel_size'
def f(x: Tensor((1, 3, 8, 8), "float32")):
    return max_pool2d(x, stride=2)
