# expect: MT_ERR_SHAPE 3:14 axis 0 is out of range for a tensor of rank 0 in 'sum'
def f(s: float32):
    out = sum(s, axis=0)
    return out
