# expect: MT_ERR_INVALID_ARG 15:9 reorder (loop 'i' is parallel): iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((64, 16), "float32"), X: T.Buffer((80,), "float32")):
    for j, i in T.grid(16, 64):
        with T.block("a"):
            vj, vi = T.axis.remap("SS", [j, i])
            X[vi + vj] = X[vi + vj] + A[vi, vj]

# parallel with j fixed outside, then j moved inside: iterations i and i + 1
# both add into X[i + 1]
@T.schedule(f)
def s(sch):
    j, i = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
    sch.reorder(i, j)
