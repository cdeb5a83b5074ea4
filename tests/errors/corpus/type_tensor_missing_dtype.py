# expect: MT_ERR_TYPE 2:16 Tensor() needs a dtype, e.g. dtype="float32"
def f(a: Tensor((2, 3))):
    return a
