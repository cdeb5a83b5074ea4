# expect: MT_ERR_SHAPE 5:21 index 4 is out of bounds for dim 1 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4, 4), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i, 4]
