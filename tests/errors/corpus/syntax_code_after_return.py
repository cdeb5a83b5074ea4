# expect: MT_ERR_SYNTAX 4:5 code after 'return' is not allowed
def f(a: Tensor((2, 3), "float32")):
    return a
    out = a
