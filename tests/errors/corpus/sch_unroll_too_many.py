# expect: MT_ERR_INVALID_ARG 13:9 unroll: loop 'i' would copy its body more than 4096 times (split it first)
@T.prim_func
def f(A: T.Buffer((1000000,), "float32"), Y: T.Buffer((1000000,), "float32")):
    for i in range(1000000):
        with T.block("c"):
            vi = T.axis.remap("S", [i])
            Y[vi] = A[vi] + T.float32(1)

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    (i,) = sch.get_loops(c)
    sch.unroll(i)
