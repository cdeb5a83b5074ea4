# expect: MT_ERR_TYPE 6:34 T.axis.remap takes variables of enclosing loops
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    with T.block("b"):
        vi = T.axis.spatial(4, 0)
        vj, = T.axis.remap("S", [vi])
        y[vi] = x[vj]
