# expect: MT_ERR_TYPE 6:18 an index must be an integer, got float32
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        v = x[i]
        y[i] = x[v]
