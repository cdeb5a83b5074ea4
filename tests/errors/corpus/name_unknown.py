# expect: MT_ERR_NAME 3:15 unknown name 'c'
def f(a: Tensor((2, 3), "float32")):
    out = a + c
    return out
