# expect: MT_ERR_INVALID_ARG 20:9 compute_at: block 'p' has a T.where predicate, which moving it would not keep
@T.prim_func
def f(A: T.Buffer((16,), "float32"), Y: T.Buffer((12,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("p"):
            vi = T.axis.remap("S", [i])
            T.where(i >= 4)
            X[vi] = A[vi] * T.float32(2)
    for j0, j1 in T.grid(3, 4):
        with T.block("c"):
            vj = T.axis.spatial(12, j0 * 4 + j1)
            Y[vj] = X[vj + 4]

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    p = sch.get_block("p")
    j0, j1 = sch.get_loops(c)
    sch.compute_at(p, j0)
