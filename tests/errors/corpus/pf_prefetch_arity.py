# expect: MT_ERR_TYPE 4:15 T.prefetch takes 1 argument, got 2
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(x[0], x[1])
    y[0] = x[0]
