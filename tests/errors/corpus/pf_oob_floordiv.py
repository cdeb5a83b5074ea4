# expect: MT_ERR_SHAPE 5:20 index 'i // 2' ranges over [0, 5), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((10,), "float32")):
    for i in range(10):
        y[i] = x[i // 2]
