# expect: MT_ERR_SYNTAX 2:1 only function definitions are allowed at the top level
x = 1
def f(a: Tensor((2, 3), "float32")):
    return a
