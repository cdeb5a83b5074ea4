# expect: MT_ERR_UNSUPPORTED 5:21 operator '**' is not supported in loop functions; use T.pow
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i] ** 2.0
