# expect: MT_ERR_SHAPE 3:22 axis 3 is out of range for a tensor of rank 3 in 'expand_dims'
def f(x: Tensor((2, 3), "float32")):
    out = expand_dims(x, 3)
    return out
