# expect: MT_ERR_INVALID_ARG 11:9 use_fma: block 'C' has no float32 or float64 multiply-add (x + a * b) to fuse
@T.prim_func
def scale(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * T.float32(2)

@T.schedule(scale)
def s(sch):
    sch.use_fma(sch.get_block("C"))
