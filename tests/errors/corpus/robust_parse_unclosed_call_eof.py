# expect: MT_ERR_SYNTAX 4:1 unexpected end of file: ')' expected (to close '(' at 3:15)
def f(a: Tensor((2, 3), "float32")):
    return exp(a
