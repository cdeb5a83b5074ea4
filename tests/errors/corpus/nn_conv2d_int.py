# expect: MT_ERR_TYPE 3:18 'conv2d' needs a float tensor, but 'x' is int32; convert with astype
def f(x: Tensor((1, 3, 8, 8), "int32"), w: Tensor((5, 3, 3, 3), "int32")):
    return conv2d(x, w)
