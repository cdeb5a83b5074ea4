# expect: MT_ERR_INVALID_ARG 17:9 compute_at: block 'C' reads 'B' at indices whose regions along dim 0 are not the same interval shifted by a constant ('j_0 * 4' and '0')
@T.prim_func
def f(A: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((32,), "float32")
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(16):
        with T.block("C"):
            vj = T.axis.spatial(16, j)
            C[vj] = B[vj] + B[0]

@T.schedule(f)
def s(sch):
    j0, j1 = sch.split(sch.get_loops(sch.get_block("C"))[0], factors=[None, 4])
    sch.compute_at(sch.get_block("B"), j0)
