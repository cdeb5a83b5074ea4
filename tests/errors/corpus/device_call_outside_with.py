# expect: MT_ERR_TYPE 3:9 device() is only allowed in 'with device(...):'
def f(x: Tensor((2,), "float32")):
    y = device("cpu")
    return x
