# expect: MT_ERR_SHAPE 7:28 index 'vi' ranges over [0, 8), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            y[vi // 2] = x[vi]
