# expect: MT_ERR_SHAPE 3:18 cannot reshape 'x' of shape (2, 3) into shape (4, 2) (6 elements into 8)
def f(x: Tensor((2, 3), "float32")):
    out = reshape(x, (4, 2))
    return out
