# expect: MT_ERR_TYPE 3:18 'exp' takes 1 argument, got 2
def f(a: Tensor((2, 3), "float32")):
    out = exp(a, a)
    return out
