# expect: MT_ERR_TYPE 4:16 buffer 'x' used as a value; index it: x[...]
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(x)
    y[0] = x[0]
