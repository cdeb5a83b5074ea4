# expect: MT_ERR_TYPE 3:16 'where' missing required argument 'y'
def f(c: Tensor((3,), "bool"), a: Tensor((3,), "float32")):
    out = where(c, a)
    return out
