# expect: MT_ERR_TYPE 3:17 'round' needs a float tensor, but 'm' is bool; convert with astype
def f(m: Tensor((3,), "bool")):
    return round(m)
