# expect: MT_ERR_SHAPE 3:17 inner dimensions of 'matmul' do not match: 'a' has shape (7, 5) and 'b' has shape (4, 3) (5 vs 4)
def f(a: Tensor((7, 5), "float32"), b: Tensor((4, 3), "float32")):
    out = matmul(a, b)
    return out
