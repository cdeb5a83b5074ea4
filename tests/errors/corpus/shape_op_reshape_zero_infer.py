# expect: MT_ERR_SHAPE 3:18 cannot infer the -1 in shape (-1, 0) of 'reshape': the other dimensions have 0 elements
def f(x: Tensor((0, 3), "float32")):
    out = reshape(x, (-1, 0))
    return out
