# expect: MT_ERR_TYPE 3:17 'argmin' is not defined on bool tensors; convert with astype
def f(x: Tensor((4,), "bool")):
    out = argmin(x)
    return out
