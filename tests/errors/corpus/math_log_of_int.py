# expect: MT_ERR_TYPE 3:12 'log' needs a float tensor, but 'x' is int32; convert with astype
def f(x: Tensor((4,), "int32")):
    y = log(x)
    return y
