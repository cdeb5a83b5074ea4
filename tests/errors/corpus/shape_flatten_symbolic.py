# expect: MT_ERR_SHAPE 3:19 cannot flatten dims 0..2 of 'x' of shape (n, 3, 4): the result would have 12*n elements, which is not a single dimension
def f(x: Tensor(("n", 3, 4), "float32")):
    return flatten(x, 0)
