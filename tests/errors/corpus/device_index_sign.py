# expect: MT_ERR_TYPE 3:17 unknown device "cuda:+1" (expected "cpu", "gpu", "cuda" or "cuda:N")
def f(x: Tensor((2,), "float32")):
    with device("cuda:+1"):
        y = x + 1.0
    return y
