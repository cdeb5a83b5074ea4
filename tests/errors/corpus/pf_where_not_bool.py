# expect: MT_ERR_TYPE 7:21 T.where's condition must be a bool, got int64
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            T.where(vi)
            y[vi] = x[vi]
