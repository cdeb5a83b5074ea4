# expect: MT_ERR_TYPE 4:38 T.Shuffle of a scalar (a vector of 2 lanes or more)
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    y[T.Ramp(0, 1, 2)] = T.Shuffle([x[0], x[1]], [0, 1])
