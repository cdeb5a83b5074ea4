# expect: MT_ERR_LIMIT 3:14 a tensor of shape (65536, 65536, 65536) and dtype float32 is too large (more than 2**48 bytes)
def f(a: Tensor((2, 3), "float32")):
    z = zeros((65536, 65536, 65536), "float32")
    return z
