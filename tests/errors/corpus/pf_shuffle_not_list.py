# expect: MT_ERR_SYNTAX 4:37 T.Shuffle takes a list of one or two vectors
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    y[T.Ramp(0, 1, 2)] = T.Shuffle(x[T.Ramp(0, 1, 4)], [0, 1])
