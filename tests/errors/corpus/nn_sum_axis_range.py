# expect: MT_ERR_SHAPE 3:14 axis 2 is out of range for a tensor of rank 2 in 'sum'
def f(x: Tensor((2, 3), "float32")):
    out = sum(x, axis=2)
    return out
