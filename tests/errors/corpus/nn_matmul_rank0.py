# expect: MT_ERR_SHAPE 3:17 'matmul' needs operands of rank 1 or more, but 's' has rank 0
def f(a: Tensor((2, 3), "float32"), s: float32):
    out = matmul(a, s)
    return out
