# expect: MT_ERR_UNSUPPORTED 3:18 'conv2d' of bfloat16 is not supported yet; convert 'x' with astype
def f(x: Tensor((1, 3, 8, 8), "bfloat16"), w: Tensor((5, 3, 3, 3), "bfloat16")):
    return conv2d(x, w)
