# expect: MT_ERR_SHAPE 3:18 cannot reshape 'x' of shape (n, 4) into shape (2, -1): the -1 would be 2*n, which is not a single dimension
def f(x: Tensor(("n", 4), "float32")):
    out = reshape(x, (2, -1))
    return out
