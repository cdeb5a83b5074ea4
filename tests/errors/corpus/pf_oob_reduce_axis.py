# expect: MT_ERR_SHAPE 9:31 index 'vk' ranges over [0, 6), out of bounds for dim 0 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 6):
        with T.block("s"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = 0.0
            y[vi] = y[vi] + x[vk]
