# expect: MT_ERR_SHAPE 6:21 index 'i * 3 + j' ranges over [0, 12), out of bounds for dim 0 of 'y' (size 11)
@T.prim_func
def f(x: T.Buffer((4, 3), "float32"), y: T.Buffer((11,), "float32")):
    for i in range(4):
        for j in range(3):
            y[i * 3 + j] = x[i, j]
