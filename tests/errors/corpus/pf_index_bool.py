# expect: MT_ERR_TYPE 5:20 an index must be an integer, got bool
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i < 2]
