# expect: MT_ERR_NAME 5:12 name 'b' is not bound on every path to here (bound at 4:9)
def f(a: Tensor((2, 3), "float32"), n: int64):
    for i in range(n):
        b = a
    return b
