# expect: MT_ERR_SHAPE 2:18 symbolic dimension "" must be an identifier
def f(a: Tensor(("",), "float32")):
    return a
