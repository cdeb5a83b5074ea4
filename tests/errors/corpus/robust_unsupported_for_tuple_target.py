# expect: MT_ERR_UNSUPPORTED 3:9 the loop variable must be a single name
def f(a: Tensor((2, 3), "float32")):
    for i, j in range(3):
        a = a + 1.0
    return a
