# expect: MT_ERR_LIMIT 3:23 tensor rank 9 exceeds the limit of 8 dimensions
def f(a: Tensor((1, 1, 1, 1, 1, 1, 1, 1), "float32")):
    return expand_dims(a, 0)
