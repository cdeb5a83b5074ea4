# expect: MT_ERR_TYPE 3:19 'erf' got an unexpected keyword argument 'approximate'
def f(x: Tensor((3,), "float32")):
    return erf(x, approximate="tanh")
