# expect: MT_ERR_TYPE 3:14 'add' is not defined on bool tensors; convert with astype
def f(a: Tensor((2, 3), "bool")):
    return a + a
