# expect: MT_ERR_TYPE 3:15 'astype' missing required argument 'dtype'
def f(x: Tensor((3,), "float32")):
    y = astype(x)
    return y
