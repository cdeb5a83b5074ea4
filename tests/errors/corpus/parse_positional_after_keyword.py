# expect: MT_ERR_SYNTAX 2:31 positional argument follows keyword argument
def f(a: Tensor(shape=(2, 3), "float32")):
    return a
