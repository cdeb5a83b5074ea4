# expect: MT_ERR_SHAPE 3:17 cannot concatenate 'a' of shape (2, 3) and 'b' of shape (2, 4) along axis 0: dimension 1 differs
def f(a: Tensor((2, 3), "float32"), b: Tensor((2, 4), "float32")):
    out = concat([a, b], axis=0)
    return out
