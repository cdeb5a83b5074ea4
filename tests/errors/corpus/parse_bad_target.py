# expect: MT_ERR_SYNTAX 3:7 invalid assignment target
def f(a: Tensor((2, 3), "float32")):
    a + a = a
    return a
