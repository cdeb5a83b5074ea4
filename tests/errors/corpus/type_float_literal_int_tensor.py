# expect: MT_ERR_TYPE 3:15 float literal used with int32 tensor 'b' in 'multiply'; convert with astype first
def f(b: Tensor((2, 3), "int32")):
    out = b * 2.5
    return out
