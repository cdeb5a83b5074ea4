# expect: MT_ERR_TYPE 2:1 function 'f' does not return a value
def f(a: Tensor((2, 3), "float32")):
    out = a + a
