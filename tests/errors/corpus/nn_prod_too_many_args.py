# expect: MT_ERR_TYPE 3:29 'prod' takes at most 3 arguments, got 4
def f(x: Tensor((2, 3), "float32")):
    out = prod(x, 1, False, 2)
    return out
