# expect: MT_ERR_SYNTAX 3:16 expected an expression, found '*'
def f(a: Tensor((2, 3), "float32")):
    return a * * a
