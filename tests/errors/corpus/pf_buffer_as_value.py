# expect: MT_ERR_TYPE 5:16 buffer 'x' used as a value; index it: x[...]
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x
