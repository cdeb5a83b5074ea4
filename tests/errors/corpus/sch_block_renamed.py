# expect: MT_ERR_INVALID_ARG 16:33 get_block: no block named 'C' (the blocks of 'mm': 'C_init', 'C_update')
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

@T.schedule(mm)
def s(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i, j)
    sch.decompose_reduction(sch.get_block("C"), f)
    sch.decompose_reduction(sch.get_block("C"), f)
