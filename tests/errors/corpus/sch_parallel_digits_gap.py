# expect: MT_ERR_INVALID_ARG 20:9 parallel: iterations of loop 'i_j_fused_0' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((64,), "float32"), X: T.Buffer((4, 2), "float32")):
    for i, j in T.grid(4, 16):
        with T.block("a"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(16, j)
            X[(vi * 16 + vj) % 4, (vi * 16 + vj) // 32] = A[vi * 16 + vj]

# X's indices are digits of f = i * 16 + j: f % 4 and f // 32, with
# f // 4 % 8 missing; chunks of 16 of f give f // 32 = 0 to two chunks,
# whose stores overlap
@T.schedule(f)
def s(sch):
    b = sch.get_block("a")
    i, j = sch.get_loops(b)
    f = sch.fuse(i, j)
    f0, f1 = sch.split(f, factors=[None, 16])
    sch.vectorize(f1)
    sch.parallel(f0)
