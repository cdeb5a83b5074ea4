# expect: MT_ERR_TYPE 3:17 'matmul' is not defined on bool tensors; convert with astype
def f(a: Tensor((2, 3), "bool"), b: Tensor((3, 2), "bool")):
    out = matmul(a, b)
    return out
