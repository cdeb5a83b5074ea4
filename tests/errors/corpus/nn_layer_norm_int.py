# expect: MT_ERR_TYPE 3:21 'layer_norm' needs a float tensor, but 'x' is int32; convert with astype
def f(x: Tensor((2, 4), "int32"), g: Tensor((4,), "int32"), b: Tensor((4,), "int32")):
    out = layer_norm(x, g, b)
    return out
