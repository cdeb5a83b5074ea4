# expect: MT_ERR_INVALID_ARG 14:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer(("m",), "float32"), X: T.Buffer((16, 4), "float32")):
    for i in range(16):
        with T.block("a"):
            vi = T.axis.spatial(16, i)
            X[vi // m, vi % m] = A[vi]

# the divisor is the extent of another buffer: with m = 0 every iteration
# stores X[0, 0] (x // 0 and x % 0 are 0)
@T.schedule(f)
def s(sch):
    i, = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
