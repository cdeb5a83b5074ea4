# expect: MT_ERR_SYNTAX 3:13 unmatched ')'
def f(a: Tensor((2, 3), "float32")):
    return a)
