# expect: MT_ERR_SHAPE 3:18 axis -1 is out of range for a tensor of rank 0 in 'softmax'
def f(s: float32):
    out = softmax(s)
    return out
