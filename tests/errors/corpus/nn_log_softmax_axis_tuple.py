# expect: MT_ERR_TYPE 3:31 'axis' of 'log_softmax' must be an integer
def f(x: Tensor((2, 3), "float32")):
    out = log_softmax(x, axis=(0, 1))
    return out
