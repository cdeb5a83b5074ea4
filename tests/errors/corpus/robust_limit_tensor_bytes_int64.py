# expect: MT_ERR_LIMIT 2:17 a tensor of shape (4294967296, 65536) and dtype int64 is too large (more than 2**48 bytes)
def f(a: Tensor((4294967296, 65536), "int64")):
    return a
