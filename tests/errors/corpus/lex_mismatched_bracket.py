# expect: MT_ERR_SYNTAX 3:17 closing ']' does not match '(' at 3:11
def f(a: Tensor((2, 3), "float32")):
    out = (a + a]
    return out
