# expect: MT_ERR_SHAPE 5:17 buffer 'x' has 0 dims, indexed with 1
@T.prim_func
def f(x: T.Buffer((), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[0]
