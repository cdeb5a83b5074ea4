# expect: MT_ERR_LIMIT 2:17 tensor rank 9 exceeds the limit of 8 dimensions
def f(a: Tensor((1, 1, 1, 1, 1, 1, 1, 1, 1), "float32")):
    return a
