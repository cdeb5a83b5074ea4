# expect: MT_ERR_UNSUPPORTED 3:5 'while' loops are not supported; use 'for i in range(n)'
def f(a: Tensor((2, 3), "float32")):
    while a:
        pass
    return a
