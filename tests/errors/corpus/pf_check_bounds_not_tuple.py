# expect: MT_ERR_TYPE 4:39 T.check_bounds takes its indices and dims as tuples: (i,), (n,)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.check_bounds(True, "load", "x", 0, (4,))
    y[0] = x[0]
