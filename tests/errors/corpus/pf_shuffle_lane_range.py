# expect: MT_ERR_TYPE 4:82 a lane of T.Shuffle is an integer literal from 0 to 7
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    y[T.Ramp(0, 1, 2)] = T.Shuffle([x[T.Ramp(0, 1, 4)], x[T.Ramp(4, 1, 4)]], [0, 8])
