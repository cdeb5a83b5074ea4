# expect: MT_ERR_INVALID_ARG 19:9 decompose_reduction: loop 'i_k_fused_0' above loop 'i_k_fused_1' binds both spatial and reduce variables of block 'C'
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(8, k)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]

# the outer part of a loop fused from a row loop and the reduce loop
# is not a reduce loop whose first iteration starts each row
@T.schedule(f)
def s(sch):
    b = sch.get_block("C")
    i, k = sch.get_loops(b)
    f0, f1 = sch.split(sch.fuse(i, k), factors=[None, 4])
    sch.decompose_reduction(b, f1)
