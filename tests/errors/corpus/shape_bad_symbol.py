# expect: MT_ERR_SHAPE 2:18 symbolic dimension "2n" must be an identifier
def f(a: Tensor(("2n",), "float32")):
    return a
