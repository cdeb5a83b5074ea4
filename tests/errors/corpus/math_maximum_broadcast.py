# expect: MT_ERR_SHAPE 3:18 cannot broadcast shapes (2, 3) and (4,) in 'maximum' (operands 'a' and 'b')
def f(a: Tensor((2, 3), "float32"), b: Tensor((4,), "float32")):
    out = maximum(a, b)
    return out
