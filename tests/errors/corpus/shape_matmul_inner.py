# expect: MT_ERR_SHAPE 3:17 inner dimensions of 'matmul' do not match: 'a' has shape (2, 3) and 'a' has shape (2, 3) (3 vs 2)
def f(a: Tensor((2, 3), "float32")):
    out = matmul(a, a)
    return out
