# expect: MT_ERR_TYPE 3:21 operands of 'layer_norm' have different dtypes: 'x' is float32 but 'g' is float64; convert one with astype
def f(x: Tensor((2, 4), "float32"), g: Tensor((4,), "float64"), b: Tensor((4,), "float32")):
    out = layer_norm(x, g, b)
    return out
