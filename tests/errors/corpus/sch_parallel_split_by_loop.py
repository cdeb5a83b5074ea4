# expect: MT_ERR_INVALID_ARG 15:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((16,), "float32"), X: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("a"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(j > 0)
            X[(vi * 4 + vj) // vj, (vi * 4 + vj) % vj] = A[vi * 4 + vj]

# the divisor is a loop variable: i = 1, j = 1 and i = 2, j = 2 both
# store X[5, 0] (z = 5 and z = 10)
@T.schedule(f)
def s(sch):
    i, j = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
