# expect: MT_ERR_NAME 6:31 unknown axis kind 'T.axis.opaque' (expected T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.opaque(4, i)
            y[vi] = x[vi]
