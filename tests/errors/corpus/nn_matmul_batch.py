# expect: MT_ERR_SHAPE 3:17 cannot broadcast the batch dimensions of 'matmul': 'a' has shape (2, 3, 4) and 'b' has shape (5, 4, 2)
def f(a: Tensor((2, 3, 4), "float32"), b: Tensor((5, 4, 2), "float32")):
    out = matmul(a, b)
    return out
