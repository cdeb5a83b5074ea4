# expect: MT_ERR_SHAPE 2:18 a dimension must be an integer or a string naming a symbolic size
def f(a: Tensor((2.5, 3), "float32")):
    return a
