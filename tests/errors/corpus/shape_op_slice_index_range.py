# expect: MT_ERR_SHAPE 3:12 index 4 is out of range for dimension 0 of 'x', of size 4
def f(x: Tensor((4, 3), "float32")):
    out = x[4]
    return out
