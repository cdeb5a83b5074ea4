# expect: MT_ERR_SYNTAX 3:18 invalid hexadecimal literal
def f(a: Tensor((2, 3), "float32")):
    return a * 0x
