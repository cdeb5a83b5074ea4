# expect: MT_ERR_SHAPE 5:17 index 'i + 4' ranges over [4, 8), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        v = x[i + 4]
        y[i] = v
