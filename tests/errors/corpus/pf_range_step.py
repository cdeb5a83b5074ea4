# expect: MT_ERR_UNSUPPORTED 4:26 a loop's step must be 1
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(0, 4, 2):
        y[i] = x[i]
