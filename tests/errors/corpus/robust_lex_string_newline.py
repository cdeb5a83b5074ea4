# expect: MT_ERR_SYNTAX 3:9 unterminated string literal
def f(a: Tensor((2, 3), "float32")):
    s = "abc
    return a
