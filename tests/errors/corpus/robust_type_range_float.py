# expect: MT_ERR_TYPE 3:20 range() takes integers, got float32 ()
def f(a: Tensor((2, 3), "float32")):
    for i in range(2.5):
        a = a + 1.0
    return a
