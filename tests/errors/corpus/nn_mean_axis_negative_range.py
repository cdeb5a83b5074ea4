# expect: MT_ERR_SHAPE 3:15 axis -3 is out of range for a tensor of rank 2 in 'mean'
def f(x: Tensor((2, 3), "float32")):
    out = mean(x, axis=(0, -3))
    return out
