# expect: MT_ERR_UNSUPPORTED 3:5 'try' is not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    try:
        b = a
    except:
        b = a
    return b
