# expect: MT_ERR_INVALID_ARG 25:9 reverse_compute_at: block 'o' writes 'X', which block 'b' writes, between them
@T.prim_func
def scan(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("w"):
            vj = T.axis.remap("S", [j])
            X[vj] = T.float32(0)
    for j in range(8):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj] = X[T.max(vj - 1, 0)] + A[vj]
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            X[vj] = X[vj] * T.float32(2)
    for j in range(8):
        with T.block("c"):
            vj = T.axis.remap("S", [j])
            B[vj] = X[vj]

@T.schedule(scan)
def s(sch):
    (j,) = sch.get_loops(sch.get_block("o"))
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((8,), "float32")):
    return scan(a)
