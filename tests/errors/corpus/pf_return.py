# expect: MT_ERR_SYNTAX 6:5 a loop function returns nothing; it stores into its output buffers
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i]
    return y
