# expect: MT_ERR_TYPE 4:28 T.prefetch is a statement (T.prefetch(buf[i]) on its own line), not a value
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(x[T.prefetch(x[0])])
    y[0] = x[0]
