# expect: MT_ERR_INVALID_ARG 12:16 split: loop 'i' has extent n, not a constant: only the first factor may be None
@T.prim_func
def f(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)

@T.schedule(f)
def s(sch):
    i, = sch.get_loops(sch.get_block("B"))
    a, b = sch.split(i, factors=[4, None])
