# expect: MT_ERR_UNSUPPORTED 3:12 slicing a symbolic dimension is not supported yet (dimension 1 of 'x' is n; only ':' keeps it)
def f(x: Tensor((3, "n"), "float32")):
    out = x[:, -1]
    return out
