# expect: MT_ERR_UNSUPPORTED 3:12 slicing a symbolic dimension is not supported yet (dimension 0 of 'x' is n; only ':' keeps it)
def f(x: Tensor(("n", 3), "float32")):
    out = x[1:, 0]
    return out
