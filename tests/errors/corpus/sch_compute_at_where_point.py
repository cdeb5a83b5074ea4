# expect: MT_ERR_INVALID_ARG 20:9 compute_at: block 'p' has a T.where predicate, which moving it would not keep
@T.prim_func
def f(A: T.Buffer((16,), "float32"), Y: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("p"):
            vi = T.axis.remap("S", [i])
            T.where(i < 15)
            X[vi] = A[vi] * T.float32(2)
    for j in range(8):
        with T.block("c"):
            vj = T.axis.remap("S", [j])
            Y[vj] = X[vj * 2]

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    p = sch.get_block("p")
    (j,) = sch.get_loops(c)
    sch.compute_at(p, j)
