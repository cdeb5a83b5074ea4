# expect: MT_ERR_INVALID_ARG 13:9 cache_write: block 'C' is a reduction: only scope local (a scalar accumulator) is supported for it
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
    sch.cache_write(sch.get_block("C"), 0, "shared")
