# expect: MT_ERR_TYPE 5:21 the value stored into 'y' is float64, expected float32
@T.prim_func
def f(x: T.Buffer((4,), "float64"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i] * 2.0
