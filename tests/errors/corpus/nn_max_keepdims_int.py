# expect: MT_ERR_TYPE 3:35 'keepdims' of 'max' must be True or False
def f(x: Tensor((2, 3), "float32")):
    out = max(x, axis=1, keepdims=1)
    return out
