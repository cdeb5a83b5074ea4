# The matmul the compiler makes from `a @ b`, blocked the way the default
# rule blocks it, with primitives alone (docs/schedule.md,
# "transform_layout"): B copied one 256 x 128 block at a time (K by
# columns), kept as 8 panels of 256 x 16, each contiguous, so that the
# 6 x 16 tiles read it in order; the block of C accumulates across the K
# blocks. A panel of the whole K (examples/kernels/matmul_primitives.py)
# is 4096 x 16 x 4 bytes = 256 KiB here, half an L2 of this machine; a
# block is 128 KiB and is reused by every row of A; the 8 column blocks
# run on threads.
#   mtc --bench 10 --random examples/kernels/matmul_blocked.py
#   mtc --emit tir-sched examples/kernels/matmul_blocked.py
def mm(a: Tensor((1024, 4096), "float32"), b: Tensor((4096, 1024), "float32")):
    return a @ b

@T.schedule("matmul")
def schedule_matmul(sch):
    blk = sch.get_block("matmul")
    i, k, j = sch.get_loops(blk)
    j0, j1, j2 = sch.split(j, factors=[None, 8, 16])
    k0, k1 = sch.split(k, factors=[None, 256])
    i0, i1 = sch.split(i, factors=[None, 6])
    sch.reorder(j0, k0, i0, j1, k1, i1, j2)
    sch.use_fma(blk)
    pack = sch.cache_read(blk, 1, "global")
    sch.compute_at(pack, k0)
    sch.transform_layout(pack, "b_global", lambda k, j: (j // 16, k, j % 16))
    _, _, pk, pj = sch.get_loops(pack)
    pj0, pj1 = sch.split(pj, factors=[None, 16])
    sch.reorder(pj0, pk, pj1)
    sch.vectorize(pj1)
    sch.decompose_reduction(blk, k0)
    sch.parallel(j0)
    sch.unroll(i1)
    sch.vectorize(j2)
