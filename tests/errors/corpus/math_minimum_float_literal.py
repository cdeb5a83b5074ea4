# expect: MT_ERR_TYPE 3:22 float literal used with int32 tensor 'i' in 'minimum'; convert with astype first
def f(i: Tensor((5,), "int32")):
    out = minimum(i, 0.5)
    return out
