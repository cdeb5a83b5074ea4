# expect: MT_ERR_SYNTAX 3:14 expected an expression, found end of line
def f(a: Tensor((2, 3), "float32")):
    out = a +
    return out
