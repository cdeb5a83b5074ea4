# expect: MT_ERR_SHAPE 8:22 index 'vi + 1' ranges over [1, 5), out of bounds for dim 0 of 'y' (size 4)
@T.prim_func
def f(x: T.Buffer((4, 4), "float32"), y: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 4):
        with T.block("s"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi + 1] = 0.0
            y[vi] = y[vi] + x[vi, vk]
