# expect: MT_ERR_TYPE 3:5 cannot unpack 1 value into 0 names
def f(a: Tensor((2, 3), "float32")):
    () = a + a
    return a
