# expect: MT_ERR_SYNTAX 2:25 unterminated string literal
def f(a: Tensor((2, 3), "float32)):
    return a
