# expect: MT_ERR_UNSUPPORTED 3:11 library function 'matmul' is not supported yet
def f(a: Tensor((2, 3), "float32")):
    out = matmul(a, a)
    return out
