# expect: MT_ERR_TYPE 4:5 'x' is float32 (2, 3) before the loop but float64 (2, 3) at the end of its body
def f(a: Tensor((2, 3), "float32"), n: int64):
    x = a
    for i in range(n):
        x = x.astype("float64")
    return x
