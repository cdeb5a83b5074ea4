# expect: MT_ERR_SHAPE 5:16 index 'i + 4' ranges over [4, 8), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        if x[i + 4] > 0.0:
            y[i] = 1.0
