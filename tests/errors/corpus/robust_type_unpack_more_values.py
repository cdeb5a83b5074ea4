# expect: MT_ERR_TYPE 3:5 cannot unpack 3 values into 2 names
def f(a: Tensor((2, 3), "float32")):
    x, y = a, a, not a
    return x
