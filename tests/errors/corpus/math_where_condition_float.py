# expect: MT_ERR_TYPE 3:17 condition of 'where' must be a bool tensor, but 'x' is float32
def f(x: Tensor((3,), "float32")):
    return where(x, x, x)
