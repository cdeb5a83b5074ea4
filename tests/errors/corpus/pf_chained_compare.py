# expect: MT_ERR_UNSUPPORTED 5:14 chained comparisons are not supported in loop functions; use 'and'
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        if 0 < i < 3:
            y[i] = x[i]
