# expect: MT_ERR_INVALID_ARG 16:9 decompose_reduction: block 'C' writes 'C' at an index of reduce variable 'vk': not a reduction the init can start
@T.prim_func
def mm(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vk, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

@T.schedule(mm)
def schedule_mm(sch):
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.decompose_reduction(blk, k)

# Found by fuzz_tir: the update stores at C[vk, vj], and the init block,
# which has no reduce variable, was given that write region too (an
# internal error).
