# expect: MT_ERR_LIMIT 3:19 the number of elements overflows in 'reshape'
def f(a: Tensor((2, 3), "float32")):
    return reshape(a, (4294967296, 4294967296, 4294967296))
