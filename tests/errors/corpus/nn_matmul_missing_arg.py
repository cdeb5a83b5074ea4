# expect: MT_ERR_TYPE 3:17 'matmul' missing required argument 'b'
def f(a: Tensor((2, 3), "float32")):
    out = matmul(a)
    return out
