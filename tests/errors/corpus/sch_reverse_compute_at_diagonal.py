# expect: MT_ERR_INVALID_ARG 21:9 reverse_compute_at: the regions of 'X' that block 'o' writes under loop 'j' do not cover what block 'b' reads, and another block writes it before
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    X = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("w"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[vi, vj] = A[vi, vj]
    for j in range(8):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj, vj] = A[vj, vj] + T.float32(100)
    for i, j in T.grid(8, 8):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = X[vi, vj] * T.float32(2)

@T.schedule(f)
def s(sch):
    (j,) = sch.get_loops(sch.get_block("o"))
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((8, 8), "float32")):
    return f(a)
