# expect: MT_ERR_TYPE 4:5 ill-formed loop function 'f': store of 2 lanes at an index of 4
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    y[T.Ramp(0, 1, 4)] = T.Shuffle([x[T.Ramp(0, 1, 4)]], [3, 2])
