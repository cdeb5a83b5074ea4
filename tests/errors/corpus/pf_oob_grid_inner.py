# expect: MT_ERR_SHAPE 5:14 index 'j' ranges over [0, 5), out of bounds for dim 1 of 'y' (size 4)
@T.prim_func
def f(x: T.Buffer((4, 4), "float32"), y: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 5):
        y[i, j] = x[i, j]
