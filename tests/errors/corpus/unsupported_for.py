# expect: MT_ERR_UNSUPPORTED 3:5 'for' statements are not supported yet
def f(a: Tensor((2, 3), "float32")):
    for i in range(4):
        a = a + 1
    return a
