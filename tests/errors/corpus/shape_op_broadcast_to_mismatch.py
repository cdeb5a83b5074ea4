# expect: MT_ERR_SHAPE 3:23 cannot broadcast 'x' of shape (2, 3) to shape (4, 3): dimension 0 has size 2, which is neither 4 nor 1
def f(x: Tensor((2, 3), "float32")):
    out = broadcast_to(x, (4, 3))
    return out
