# expect: MT_ERR_SHAPE 3:17 tensors in 'concat' have different ranks: 'a' has rank 2 but 'b' has rank 1
def f(a: Tensor((2, 3), "float32"), b: Tensor((3,), "float32")):
    out = concat((a, b), axis=-1)
    return out
