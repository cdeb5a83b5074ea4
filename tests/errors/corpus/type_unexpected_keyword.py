# expect: MT_ERR_TYPE 3:18 'exp' got an unexpected keyword argument 'axis'
def f(a: Tensor((2, 3), "float32")):
    out = exp(a, axis=1)
    return out
