# expect: MT_ERR_INVALID_ARG 21:9 reverse_compute_at: block 'b' reads 'B', the buffer it writes, at another element (a recurrence: it would run in the producer's order)
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), C: T.Buffer((5, 5), "float32"), B: T.Buffer((5, 5), "float32")):
    X = T.alloc_buffer((4, 4), "float32")
    for i, j in T.grid(5, 5):
        with T.block("binit"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = C[vi, vj]
    for j, i in T.grid(4, 4):
        with T.block("o"):
            vj, vi = T.axis.remap("SS", [j, i])
            X[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 4):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi + 1, vj] = B[vi, vj + 1] + X[vi, vj]

@T.schedule(f)
def s(sch):
    j, i = sch.get_loops(sch.get_block("o"))
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((4, 4), "float32"), c: Tensor((5, 5), "float32")):
    return f(a, c)
