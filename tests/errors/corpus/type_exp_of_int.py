# expect: MT_ERR_TYPE 3:14 'exp' needs a float tensor, but 'b' is int32; convert with astype
def f(b: Tensor((2, 3), "int32")):
    out = exp(b)
    return out
