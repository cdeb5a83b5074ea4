# expect: MT_ERR_UNSUPPORTED 6:11 calling function 'g' is not supported yet
def g(a: Tensor((2, 3), "float32")):
    return a

def f(a: Tensor((2, 3), "float32")):
    out = g(a)
    return out
