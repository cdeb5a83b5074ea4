# expect: MT_ERR_SHAPE 3:14 zeros: dimension -1 is not allowed
def f():
    z = zeros((2, -1))
    return z
