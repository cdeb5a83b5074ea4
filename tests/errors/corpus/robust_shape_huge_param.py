# expect: MT_ERR_LIMIT 2:17 a tensor of shape (1099511627776, 1099511627776) and dtype float32 is too large (more than 2**48 bytes)
def f(a: Tensor((1099511627776, 1099511627776), "float32")):
    return a
