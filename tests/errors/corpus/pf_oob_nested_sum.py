# expect: MT_ERR_SHAPE 5:23 index 'i + j' ranges over [0, 5), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((3, 3), "float32")):
    for i, j in T.grid(3, 3):
        y[i, j] = x[i + j]
