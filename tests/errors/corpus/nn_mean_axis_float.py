# expect: MT_ERR_TYPE 3:24 'axis' of 'mean' must be an integer, a tuple of integers or None
def f(x: Tensor((2, 3), "float32")):
    out = mean(x, axis=1.5)
    return out
