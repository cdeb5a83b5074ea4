# expect: MT_ERR_SYNTAX 3:17 invalid decimal literal
def f(a: Tensor((2, 3), "float32")):
    return a * 1e
