# expect: MT_ERR_SYNTAX 3:15 integer literal is too large (does not fit in int64)
def f(a: Tensor((2, 3), "float32")):
    out = a * 99999999999999999999
    return out
