# expect: MT_ERR_INVALID_ARG 16:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer(("n",), "float32"), X: T.Buffer(("n",), "float32")):
    for i in range(4):
        for j in range(n - 4):
            with T.block("a"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j)
                X[vi + vj] = A[vj] + T.float32(1)

# j's range is not known (n - 4 rows): i + j of two iterations i overlap,
# and j is not fixed while i runs
@T.schedule(f)
def s(sch):
    i, j = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
