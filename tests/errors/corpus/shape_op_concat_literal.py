# expect: MT_ERR_TYPE 3:17 'concat' joins tensors, but argument 2 is a literal
def f(a: Tensor((2, 3), "float32")):
    out = concat((a, 1.0))
    return out
