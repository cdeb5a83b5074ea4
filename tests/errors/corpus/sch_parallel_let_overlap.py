# expect: MT_ERR_INVALID_ARG 14:9 parallel: iterations of loop 'i' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(A: T.Buffer((64,), "float32"), X: T.Buffer((64,), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("a"):
            vi, vj = T.axis.remap("SS", [i, j])
            base = vi // 2
            X[base + vj] = A[base + vj] * T.float32(2)

# base is read as vi // 2: iterations 0 and 1 both store X[0 .. 3]
@T.schedule(f)
def s(sch):
    i, j = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
