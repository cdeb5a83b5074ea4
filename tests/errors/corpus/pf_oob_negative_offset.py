# expect: MT_ERR_SHAPE 5:20 index 'i - 1' ranges over [-1, 3), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i - 1]
