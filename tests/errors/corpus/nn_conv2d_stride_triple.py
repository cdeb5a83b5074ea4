# expect: MT_ERR_TYPE 3:32 'stride' of 'conv2d' must be an integer or a tuple of 2 integers
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w, stride=(1, 2, 1))
