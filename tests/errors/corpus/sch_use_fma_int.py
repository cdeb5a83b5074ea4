# expect: MT_ERR_INVALID_ARG 11:9 use_fma: block 'C' has no float32 or float64 multiply-add (x + a * b) to fuse
@T.prim_func
def axpy(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * 3 + 1

@T.schedule(axpy)
def s(sch):
    sch.use_fma(sch.get_block("C"))
