# expect: MT_ERR_SHAPE 3:18 cannot reshape 'x' of shape (n, 4) into shape (4, m) (4*n elements into 4*m)
def f(x: Tensor(("n", 4), "float32"), y: Tensor(("m",), "float32")):
    out = reshape(x, (4, "m"))
    return out
