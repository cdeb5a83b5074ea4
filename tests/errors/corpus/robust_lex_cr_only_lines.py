# expect: MT_ERR_NAME 3:15 unknown name 'b'
def f(a: Tensor((2, 3), "float32")):    out = a + b    return out