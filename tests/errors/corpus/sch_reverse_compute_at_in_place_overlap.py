# expect: MT_ERR_INVALID_ARG 26:9 reverse_compute_at: block 'b' updates 'X' in place, and the regions of it that the iterations of loop 'j' (or of the loops around it) write may overlap
@T.prim_func
def inpl(A: T.Buffer((3, 8), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("w"):
            vj = T.axis.remap("S", [j])
            X[vj] = T.float32(1)
    for r, j in T.grid(3, 8):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj] = X[vj] + A[0, vj]
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            X[vj] = X[vj] * T.float32(2)
    for j in range(8):
        with T.block("c"):
            vj = T.axis.remap("S", [j])
            B[vj] = X[vj]

@T.schedule(inpl)
def s(sch):
    o = sch.get_block("o")
    r, j = sch.get_loops(o)
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((3, 8), "float32")):
    return inpl(a)
