# expect: MT_ERR_TYPE 4:17 T.prefetch takes one element of a buffer (buf[i, ...]), not a vector of them
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(x[T.Ramp(0, 1, 4)])
    y[0] = x[0]
