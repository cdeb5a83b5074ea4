# expect: MT_ERR_SYNTAX 2:37 duplicate parameter 'a' in function definition
def f(a: Tensor((2, 3), "float32"), a: Tensor((2, 3), "float32")):
    return a
