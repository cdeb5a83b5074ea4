# expect: MT_ERR_SYNTAX 3:5 unterminated triple-quoted string literal
def f(a: Tensor((2, 3), "float32")):
    """doc
    return a
