# expect: MT_ERR_TYPE 6:9 'v' is not a buffer: only buffer elements can be updated
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        v = x[i]
        v += 1.0
        y[i] = v
