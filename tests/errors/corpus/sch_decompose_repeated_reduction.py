# expect: MT_ERR_INVALID_ARG 16:9 decompose_reduction: loop 'r' binds no variable of block 'C': it repeats the reduction, each time from its init
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    for i, r, k in T.grid(8, 3, 8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(8, k)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]

@T.schedule(f)
def s(sch):
    b = sch.get_block("C")
    i, r, k = sch.get_loops(b)
    sch.decompose_reduction(b, i)
