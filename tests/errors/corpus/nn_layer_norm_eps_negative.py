# expect: MT_ERR_TYPE 3:21 eps of 'layer_norm' must be a finite number >= 0, got -1
def f(x: Tensor((2, 4), "float32"), g: Tensor((4,), "float32"), b: Tensor((4,), "float32")):
    out = layer_norm(x, g, b, eps=-1.0)
    return out
