# expect: MT_ERR_SYNTAX 3:13 invalid character '×' (U+00D7)
def f(a: Tensor((2, 3), "float32")):
    out = a × a
    return out
