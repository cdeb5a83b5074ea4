# The matmul the compiler makes from `a @ b`, scheduled with primitives
# alone (docs/tutorial.md, "Your own schedule"): 6 x 16 tiles of the result
# in registers, each update one fused multiply-add (use_fma), B copied one
# panel of 16 columns at a time (cache_read under the panel loop: a
# contiguous 1000 x 16 buffer per panel and thread), panels on threads.
# 1000 is not a multiple of 6 or 16: the last row tile (4 rows) and the
# last panel (8 columns) are peeled and get code of their own.
#   mtc --bench 20 --random examples/kernels/matmul_primitives.py
#   mtc --emit schedule examples/kernels/matmul_primitives.py
def mm(a: Tensor((1000, 1000), "float32"), b: Tensor((1000, 1000), "float32")):
    return a @ b

@T.schedule("matmul")
def schedule_matmul(sch):
    blk = sch.get_block("matmul")
    i, k, j = sch.get_loops(blk)
    i0, i1 = sch.split(i, factors=[None, 6])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(j0, i0, k, i1, j1)
    sch.use_fma(blk)
    pack = sch.cache_read(blk, 1, "global")
    sch.compute_at(pack, j0)
    _, pk, pj = sch.get_loops(pack)
    sch.vectorize(pj)
    sch.decompose_reduction(blk, k)
    sch.parallel(j0)
    sch.unroll(i1)
    sch.vectorize(j1)
