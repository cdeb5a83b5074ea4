# expect: MT_ERR_SHAPE 4:47 T.check_bounds has 2 indices and 1 dim: one dim per index
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.check_bounds(True, "load", "x", (0, 1), (4,))
    y[0] = x[0]
