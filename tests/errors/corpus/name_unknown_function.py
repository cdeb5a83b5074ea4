# expect: MT_ERR_NAME 3:11 unknown function 'frobnicate'
def f(a: Tensor((2, 3), "float32")):
    out = frobnicate(a)
    return out
