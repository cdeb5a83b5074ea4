# expect: MT_ERR_TYPE 3:17 'axis' of 'argmax' must be an integer or None, not a tuple of 2
def f(x: Tensor((2, 3), "float32")):
    out = argmax(x, axis=(0, 1))
    return out
