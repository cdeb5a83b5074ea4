# expect: MT_ERR_TYPE 3:32 'groups' of 'conv2d' must be an integer
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((5, 3, 3, 3), "float32")):
    return conv2d(x, w, groups=(1, 1))
