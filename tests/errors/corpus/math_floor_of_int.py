# expect: MT_ERR_TYPE 3:14 'floor' needs a float tensor, but 'i' is int64; convert with astype
def f(i: Tensor((2, 2), "int64")):
    y = floor(i) + 1
    return y
