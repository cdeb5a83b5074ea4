# expect: MT_ERR_SYNTAX 3:16 leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers
def f(a: Tensor((2, 3), "float32")):
    return a * 007
