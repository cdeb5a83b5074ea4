# expect: MT_ERR_UNSUPPORTED 3:17 concatenating along a symbolic dimension is not supported yet (dimension 0 of 'a' is n)
def f(a: Tensor(("n", 3), "float32"), b: Tensor((2, 3), "float32")):
    out = concat((a, b))
    return out
