# expect: MT_ERR_INVALID_ARG 21:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), Y: T.Buffer((8, 8), "float32")):
    X = T.alloc_buffer((9, 9), "float32")
    for i, j in T.grid(9, 9):
        with T.block("z"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi, vj] = T.float32(0)
    for i, j in T.grid(8, 8):
        with T.block("a"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi + 1, vj] = A[vi, vj]
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj + 1]

@T.schedule(f)
def s(sch):
    b = sch.get_block("a")
    i, j = sch.get_loops(b)
    sch.parallel(i)
