# expect: MT_ERR_TYPE 4:23 T.grid has 1 extents for 2 loop variables
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i, j in T.grid(4):
        y[i] = x[j]
