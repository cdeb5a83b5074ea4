# expect: MT_ERR_LIMIT 3:24 a tensor of shape (4294967296, 4294967296, 2, 3) and dtype float32 is too large (more than 2**48 bytes)
def f(a: Tensor((2, 3), "float32")):
    return broadcast_to(a, (4294967296, 4294967296, 2, 3))
