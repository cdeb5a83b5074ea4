# expect: MT_ERR_SHAPE 3:21 gamma of 'layer_norm' must have the trailing dimensions of x (at least one): 'g' has shape (2, 4) and 'x' has shape (4,)
def f(x: Tensor((4,), "float32"), g: Tensor((2, 4), "float32"), b: Tensor((2, 4), "float32")):
    out = layer_norm(x, g, b)
    return out
