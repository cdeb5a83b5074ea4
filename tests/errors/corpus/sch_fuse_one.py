# expect: MT_ERR_INVALID_ARG 17:13 fuse: give 2 to 16 loops, not 1
@T.prim_func
def two(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)

@T.schedule(two)
def s(sch):
    i, j = sch.get_loops(sch.get_block("B"))
    f = sch.fuse(i)
