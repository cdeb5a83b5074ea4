# expect: MT_ERR_TYPE 5:21 T.max takes 2 arguments, got 1
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = T.max(x[i])
