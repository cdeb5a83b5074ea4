# expect: MT_ERR_INVALID_ARG 25:9 decompose_reduction: the init of block 'C' reads 'Z', which block 'z' writes under loop 'i'
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    Z = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("z0"):
            vi = T.axis.remap("S", [i])
            Z[vi] = T.float32(0)
    for i in range(8):
        with T.block("z"):
            vi = T.axis.remap("S", [i])
            Z[vi] = A[vi, 0] * T.float32(2)
        for k in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(8, k)
                with T.init():
                    C[vi] = Z[vi]
                C[vi] = C[vi] + A[vi, vk]

@T.schedule(f)
def s(sch):
    b = sch.get_block("C")
    i, k = sch.get_loops(b)
    sch.decompose_reduction(b, i)
