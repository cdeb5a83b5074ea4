# expect: MT_ERR_TYPE 3:8 the condition of 'if' must be a scalar, got a tensor of shape (2, 3)
def f(a: Tensor((2, 3), "float32")):
    if a:
        a = a + 1
    return a
