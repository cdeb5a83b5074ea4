# expect: MT_ERR_TYPE 12:17 sch.use_fma(): its argument must be a block, not a loop
@T.prim_func
def axpy(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * 3.0 + 1.0

@T.schedule(axpy)
def s(sch):
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.use_fma(i)
