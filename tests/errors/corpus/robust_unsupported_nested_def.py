# expect: MT_ERR_UNSUPPORTED 3:5 nested function definitions are not supported
def f(a: Tensor((2, 3), "float32")):
    def g(x):
        return x
    return a
