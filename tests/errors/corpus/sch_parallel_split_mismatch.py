# expect: MT_ERR_INVALID_ARG 20:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((64,), "float32"), X: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("a"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[(vi * 8 + vj) // 4, (vi * 8 + vj) % 4] = A[vi * 8 + vj]
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[(vi * 8 + vj) // 8, (vi * 8 + vj) % 8] = A[vi * 8 + vj] * T.float32(2)

# Both stores split the index 8 * i + j into two dimensions, by 4 and by
# 8: iteration 1 writes rows 2 and 3 through block a, iteration 2 row 2
# through block b. Each split alone is one-to-one; read together they
# are not the same split, so no dimension separates the iterations.

@T.schedule(f)
def s(sch):
    i, j = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
