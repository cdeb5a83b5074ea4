# expect: MT_ERR_SYNTAX 2:36 expected ':' after the function signature
def f(a: Tensor((2, 3), "float32"))
    return a
