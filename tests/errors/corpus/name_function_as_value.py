# expect: MT_ERR_TYPE 3:15 'exp' is a function; call it with arguments
def f(a: Tensor((2, 3), "float32")):
    out = a + exp
    return out
