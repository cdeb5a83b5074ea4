# expect: MT_ERR_NAME 13:9 'tile' is not a schedule primitive (they are: get_block, get_loops, split, fuse, reorder, parallel, vectorize, unroll, bind, compute_at, compute_inline, reverse_compute_at, reverse_compute_inline, cache_read, cache_write, decompose_reduction, rfactor, use_fma, transform_layout, apply_rule)
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
    sch.tile(1)
