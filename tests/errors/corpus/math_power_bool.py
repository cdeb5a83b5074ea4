# expect: MT_ERR_TYPE 3:14 'power' is not defined on bool tensors; convert with astype
def f(m: Tensor((4,), "bool")):
    p = power(m, m)
    return p
