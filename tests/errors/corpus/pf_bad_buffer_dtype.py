# expect: MT_ERR_TYPE 3:25 unknown dtype 'float33'
@T.prim_func
def f(x: T.Buffer((4,), "float33"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i]
