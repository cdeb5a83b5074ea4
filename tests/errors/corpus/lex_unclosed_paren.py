# expect: MT_ERR_SYNTAX 4:1 unexpected end of file: ')' expected (to close '(' at 2:6)
def f(a: Tensor((2, 3), "float32"):
    return a
