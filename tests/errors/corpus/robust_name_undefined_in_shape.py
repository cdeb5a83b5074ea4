# expect: MT_ERR_NAME 3:24 unknown name 'n'
def f(a: Tensor((2, 3), "float32")):
    return reshape(a, (n, 2))
