# expect: MT_ERR_TYPE 3:28 float literal used with int32 tensor 'maximum(a, b)' in 'multiply'; convert with astype first
def f(a: Tensor((4,), "int32"), b: Tensor((4,), "int32")):
    return maximum(a, b) * 0.5
