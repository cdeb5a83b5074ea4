# expect: MT_ERR_TYPE 5:21 T.exp takes 1 argument, got 2
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = T.exp(x[i], 1.0)
