# expect: MT_ERR_TYPE 5:13 an if condition must be a bool, got float32
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        if x[i]:
            y[i] = 1.0
