# expect: MT_ERR_TYPE 3:14 'sum' is not defined on bool tensors; convert with astype
def f(x: Tensor((2, 3), "bool")):
    out = sum(x, axis=0)
    return out
