# expect: MT_ERR_INVALID_ARG 14:9 reorder: loop 'j' is vectorized: it must stay innermost
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("c"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * B[vj] + T.float32(1)

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    i, j = sch.get_loops(c)
    sch.vectorize(j)
    sch.reorder(j, i)
