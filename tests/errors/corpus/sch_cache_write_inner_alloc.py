# expect: MT_ERR_INVALID_ARG 17:9 cache_write: 't' is allocated inside the function's loops or blocks; the copy back goes at its top level
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        t = T.alloc_buffer((8,), "float32")
        for j in range(8):
            with T.block("w"):
                vj = T.axis.spatial(8, j)
                t[vj] = A[vj]
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]

@T.schedule(f)
def s(sch):
    sch.cache_write(sch.get_block("w"), 0, "global")
