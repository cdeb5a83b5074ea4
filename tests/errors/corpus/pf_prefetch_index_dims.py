# expect: MT_ERR_SHAPE 4:17 buffer 'x' has 1 dim, indexed with 2
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.prefetch(x[0, 1])
    y[0] = x[0]
