# expect: MT_ERR_SHAPE 3:18 cannot reshape 'x' of shape (2, 3) into shape (4, -1) (6 elements into a multiple of 4)
def f(x: Tensor((2, 3), "float32")):
    out = reshape(x, (4, -1))
    return out
