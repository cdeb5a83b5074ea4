# expect: MT_ERR_INVALID_ARG 12:9 cache_read: 't' is allocated inside the function's loops or blocks; the copy goes at its top level
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        t = T.alloc_buffer((8,), "float32")
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + t[0]

@T.schedule(f)
def s(sch):
    sch.cache_read(sch.get_block("b"), 1, "global")
