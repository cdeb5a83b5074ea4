# expect: MT_ERR_TYPE 4:26 T.check_bounds' access kind must be "load" or "store"
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.check_bounds(True, "read", "x", (0,), (4,))
    y[0] = x[0]
