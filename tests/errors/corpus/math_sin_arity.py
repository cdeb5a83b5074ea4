# expect: MT_ERR_TYPE 3:19 'sin' takes 1 argument, got 2
def f(x: Tensor((3,), "float32")):
    return sin(x, x)
