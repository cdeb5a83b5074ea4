# expect: MT_ERR_SHAPE 3:19 start_dim 3 of 'flatten' is out of range for a tensor of rank 3
def f(x: Tensor((2, 3, 4), "float32")):
    return flatten(x, start_dim=3)
