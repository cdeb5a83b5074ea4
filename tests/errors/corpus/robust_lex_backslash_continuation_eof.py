# expect: MT_ERR_SYNTAX 3:16 unexpected end of file after line continuation character
def f(a: Tensor((2, 3), "float32")):
    return a + \