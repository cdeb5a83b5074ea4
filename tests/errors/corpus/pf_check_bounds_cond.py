# expect: MT_ERR_TYPE 4:21 a bounds check's condition must be a bool, got float32
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.check_bounds(x[0], "load", "x", (0,), (4,))
    y[0] = x[0]
