# expect: MT_ERR_TYPE 3:18 'softmax' needs a float tensor, but 'x' is int32; convert with astype
def f(x: Tensor((2, 3), "int32")):
    out = softmax(x)
    return out
