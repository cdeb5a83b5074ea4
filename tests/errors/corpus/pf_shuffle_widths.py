# expect: MT_ERR_TYPE 4:58 T.Shuffle of a float32 x 4 and a float32 x 2 vector (one dtype and width)
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    y[T.Ramp(0, 1, 2)] = T.Shuffle([x[T.Ramp(0, 1, 4)], x[T.Ramp(4, 1, 2)]], [0, 5])
