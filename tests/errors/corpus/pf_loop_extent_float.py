# expect: MT_ERR_TYPE 4:21 a loop bound must be an integer, got float32
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(x[0]):
        y[i] = x[i]
