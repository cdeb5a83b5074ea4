# expect: MT_ERR_UNSUPPORTED 3:16 only 'for i in range(...)' loops are supported
def f(a: Tensor((2, 3), "float32")):
    for row in a:
        b = row
    return a
