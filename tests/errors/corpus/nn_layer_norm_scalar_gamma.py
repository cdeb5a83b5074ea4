# expect: MT_ERR_SHAPE 3:21 gamma of 'layer_norm' must have the trailing dimensions of x (at least one): a float32 constant has shape () and 'x' has shape (2, 4)
def f(x: Tensor((2, 4), "float32"), b: Tensor((4,), "float32")):
    out = layer_norm(x, 1.0, b)
    return out
