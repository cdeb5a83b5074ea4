# expect: MT_ERR_INVALID_ARG 16:9 compute_inline: block 'C' writes 'C', which the function does not allocate (a parameter or output)
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
    sch.compute_inline(sch.get_block("C"))
