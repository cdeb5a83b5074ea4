# A matmul written as a loop function, and a schedule that makes it fast
# (docs/tutorial.md, "Your own schedule"). B is packed into panels of 16
# columns (Bp[j0, k, j1] = B[k, j0 * 16 + j1]) so that the inner loop reads
# it contiguously; each product is one fused multiply-add (T.fma); the
# schedule cuts C into 6 x 16 tiles (960 = 6 * 160 = 16 * 60: no partial
# tile) kept in registers across k, runs the panels on threads and
# vectorizes the tile's columns.
#   mtc --bench 20 --random examples/kernels/matmul_schedule.py
@T.prim_func
def mm(A: T.Buffer((960, 960), "float32"), B: T.Buffer((960, 960), "float32"),
       C: T.Buffer((960, 960), "float32")):
    Bp = T.alloc_buffer((60, 960, 16), "float32")
    for j0, k, j1 in T.grid(60, 960, 16):
        with T.block("pack"):
            vj0, vk, vj1 = T.axis.remap("SSS", [j0, k, j1])
            Bp[vj0, vk, vj1] = B[vk, vj0 * 16 + vj1]
    for i, j, k in T.grid(960, 960, 960):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = T.fma(A[vi, vk], Bp[vj // 16, vk, vj % 16], C[vi, vj])

@T.schedule(mm)
def schedule_mm(sch):
    # the packing: panels on threads, each row of a panel one vector copy
    j0, k, j1 = sch.get_loops(sch.get_block("pack"))
    sch.parallel(j0)
    sch.vectorize(j1)
    # the product: a 6 x 16 tile of C per (i0, j0), accumulated over all of k
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, factors=[None, 6])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(j0, i0, k, i1, j1)
    sch.decompose_reduction(blk, k)
    sch.parallel(j0)
    sch.unroll(i1)
    sch.vectorize(j1)
