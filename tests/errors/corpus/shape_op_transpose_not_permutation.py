# expect: MT_ERR_SHAPE 3:20 axes (0, -2) of 'transpose' are not a permutation of the 2 dims of 'x'
def f(x: Tensor((2, 3), "float32")):
    out = transpose(x, (0, -2))
    return out
