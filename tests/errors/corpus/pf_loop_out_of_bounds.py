# expect: MT_ERR_SHAPE 5:11 index 'i' ranges over [0, 5), out of bounds for dim 0 of 'y' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(5):
        y[i] = x[i]
