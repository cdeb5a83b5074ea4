# expect: MT_ERR_TYPE 4:13 'sign' is not defined on bool tensors; convert with astype
def f(x: Tensor((3,), "float32"), m: Tensor((3,), "bool")):
    s = x * 2.0
    t = sign(m)
    return s, t
