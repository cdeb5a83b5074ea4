# expect: MT_ERR_SHAPE 3:20 shape index 2 is out of range for a tensor of rank 2
def f(a: Tensor((2, 3), "float32")):
    return a.shape[2]
