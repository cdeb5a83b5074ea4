# expect: MT_ERR_TYPE 3:12 'abs' is not defined on bool tensors; convert with astype
def f(m: Tensor((3,), "bool")):
    a = abs(m)
    return a
