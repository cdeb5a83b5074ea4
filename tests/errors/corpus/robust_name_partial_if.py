# expect: MT_ERR_NAME 5:12 name 'out' is not bound on every path to here (bound at 4:9)
def f(a: Tensor((2, 3), "float32"), c: bool):
    if c:
        out = a
    return out
