# expect: MT_ERR_TYPE 5:17 the value stored into 'y' is float32, expected int32
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "int32")):
    for i in range(4):
        y[i] = x[i]
