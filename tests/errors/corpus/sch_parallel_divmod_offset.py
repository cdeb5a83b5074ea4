# expect: MT_ERR_INVALID_ARG 15:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((256,), "float32"), X: T.Buffer((9,), "float32")):
    for o, i, g in T.grid(2, 4, 32):
        with T.block("a"):
            v = T.axis.spatial(256, o * 8 + i * 32 + g)
            X[v // 32] = A[v]

# (o * 8 + i * 32 + g) // 32 for g < 32: with o = 1, iteration i stores
# X[i] and X[i + 1], and so does iteration i + 1 at X[i + 1]; an offset that
# is a multiple of 32 (o * 64) would split X among the iterations
@T.schedule(f)
def s(sch):
    o, i, g = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
