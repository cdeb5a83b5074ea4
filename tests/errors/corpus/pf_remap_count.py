# expect: MT_ERR_TYPE 6:34 T.axis.remap: 2 kinds, 1 loop variables and 2 names must agree
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i])
            y[vi] = x[vj]
