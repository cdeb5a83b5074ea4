# expect: MT_ERR_TYPE 5:23 unknown dtype 'flt'
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = T.Cast("flt", x[i])
