# expect: MT_ERR_UNSUPPORTED 3:5 'if' statements are not supported yet
def f(a: Tensor((2, 3), "float32")):
    if a:
        a = a + 1
    return a
