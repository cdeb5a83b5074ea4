# expect: MT_ERR_SHAPE 3:21 beta of 'layer_norm' must have the shape of gamma: 'b' has shape (2, 4) and 'g' has shape (4,)
def f(x: Tensor((2, 4), "float32"), g: Tensor((4,), "float32"), b: Tensor((2, 4), "float32")):
    out = layer_norm(x, g, b)
    return out
