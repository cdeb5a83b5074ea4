# expect: MT_ERR_TYPE 3:35 'eps' of 'layer_norm' must be a number
def f(x: Tensor((2, 4), "float32"), g: Tensor((4,), "float32"), b: Tensor((4,), "float32")):
    out = layer_norm(x, g, b, eps="small")
    return out
