# expect: MT_ERR_INVALID_ARG 20:9 reverse_compute_at: block 'c' has a T.where predicate, which moving it would not keep
@T.prim_func
def f(A: T.Buffer((16,), "float32"), Y: T.Buffer((12,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    for i0, i1 in T.grid(4, 4):
        with T.block("p"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            X[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("c"):
            vi = T.axis.remap("S", [i])
            T.where(i >= 4)
            Y[vi - 4] = X[vi]

@T.schedule(f)
def s(sch):
    p = sch.get_block("p")
    c = sch.get_block("c")
    i0, i1 = sch.get_loops(p)
    sch.reverse_compute_at(c, i0)
