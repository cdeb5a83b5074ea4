# expect: MT_ERR_INVALID_ARG 22:9 reverse_compute_at: the regions of 'X' that block 'o' writes under loop 'j' do not cover what block 'b' reads, and another block writes it before
@T.prim_func
def part(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("w"):
            vj = T.axis.remap("S", [j])
            X[vj] = A[vj]
    for j in range(4):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj] = A[vj] + T.float32(100)
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            B[vj] = X[vj] * T.float32(2)

@T.schedule(part)
def s(sch):
    o = sch.get_block("o")
    (j,) = sch.get_loops(o)
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((8,), "float32")):
    return part(a)
