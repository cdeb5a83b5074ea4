# expect: MT_ERR_TYPE 4:16 T.prefetch takes one element of a buffer (buf[i, ...]), not a value
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(1.0)
    y[0] = x[0]
