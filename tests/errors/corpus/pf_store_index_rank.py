# expect: MT_ERR_SHAPE 5:10 buffer 'y' has 1 dim, indexed with 2
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i, 0] = x[i]
