# expect: MT_ERR_SYNTAX 5:20 T.init() is only allowed in the header of a block
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.init():
            y[i] = 0.0
