# expect: MT_ERR_SHAPE 3:17 inner dimensions of 'matmul' do not match: 'a' has shape (5,) and 'b' has shape (2, 6, 3) (5 vs 6)
def f(a: Tensor((5,), "float32"), b: Tensor((2, 6, 3), "float32")):
    out = matmul(a, b)
    return out
