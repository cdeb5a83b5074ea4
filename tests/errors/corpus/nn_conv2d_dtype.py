# expect: MT_ERR_TYPE 3:18 operands of 'conv2d' have different dtypes: 'x' is float32 but 'w' is float64; convert one with astype
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((5, 3, 3, 3), "float64")):
    return conv2d(x, w)
