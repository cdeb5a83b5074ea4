# expect: MT_ERR_SHAPE 3:17 inner dimensions of 'matmul' do not match: 'a' has shape (n, k) and 'b' has shape (j, 3) (k vs j)
def f(a: Tensor(("n", "k"), "float32"), b: Tensor(("j", 3), "float32")):
    out = matmul(a, b)
    return out
