# expect: MT_ERR_SHAPE 3:14 duplicate axis 1 in 'sum' (axis=(1, -2) for a tensor of rank 3)
def f(x: Tensor((2, 3, 4), "float32")):
    out = sum(x, axis=(1, -2))
    return out
