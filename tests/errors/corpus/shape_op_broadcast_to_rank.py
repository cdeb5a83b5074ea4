# expect: MT_ERR_SHAPE 3:23 cannot broadcast 'x' of shape (2, 3) to shape (3,), which has fewer dimensions
def f(x: Tensor((2, 3), "float32")):
    out = broadcast_to(x, (3,))
    return out
