# expect: MT_ERR_SHAPE 5:22 index 'i' ranges over [2, 6), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(2, 6):
        y[i - 2] = x[i]
