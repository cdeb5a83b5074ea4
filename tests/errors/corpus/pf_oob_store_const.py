# expect: MT_ERR_SHAPE 5:11 index 4 is out of bounds for dim 0 of 'y' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[4] = x[i]
