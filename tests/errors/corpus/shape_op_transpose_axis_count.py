# expect: MT_ERR_SHAPE 3:20 axes (1, 0) of 'transpose' are not a permutation of the 3 dims of 'x'
def f(x: Tensor((2, 3, 4), "float32")):
    out = transpose(x, (1, 0))
    return out
