# expect: MT_ERR_SHAPE 3:16 cannot broadcast shapes (2, 1), (3,) and (4, 1) in 'where' (operands 'c', 'a' and 'b')
def f(c: Tensor((2, 1), "bool"), a: Tensor((3,), "float32"), b: Tensor((4, 1), "float32")):
    out = where(c, a, b)
    return out
