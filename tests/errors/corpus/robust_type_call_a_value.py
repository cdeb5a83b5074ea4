# expect: MT_ERR_TYPE 3:12 'a' is a value, not a function; it cannot be called
def f(a: Tensor((2, 3), "float32")):
    return a(1)
