# expect: MT_ERR_LIMIT 3:68 too many tensor arguments (more than 16)
def f(a: Tensor((2, 3), "float32")):
    return concat((a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a), axis=0)
