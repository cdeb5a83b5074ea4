# expect: MT_ERR_SHAPE 3:19 start_dim of 'flatten' (2) comes after end_dim (1) for a tensor of rank 3
def f(x: Tensor((2, 3, 4), "float32")):
    return flatten(x, 2, 1)
