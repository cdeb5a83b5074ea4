# expect: MT_ERR_NAME 3:11 unknown name 'out'
def f(a: Tensor((2, 3), "float32")):
    out = out + a
    return out
