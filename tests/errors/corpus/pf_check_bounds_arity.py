# expect: MT_ERR_TYPE 4:19 T.check_bounds takes 5 arguments, got 4
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.check_bounds(True, "load", "x", (0,))
    y[0] = x[0]
