# expect: MT_ERR_TYPE 3:5 'out' is float32 (2, 3) after the if-branch but int32 (2, 3) after the else-branch
def f(a: Tensor((2, 3), "float32"), c: bool):
    if c:
        out = a
    else:
        out = a.astype("int32")
    return out
