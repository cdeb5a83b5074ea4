# expect: MT_ERR_TYPE 6:35 unknown axis kind 'X' in T.axis.remap (expected 'S' or 'R')
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("b"):
            vi, vj = T.axis.remap("SX", [i, j])
            y[vi] = x[vj]
