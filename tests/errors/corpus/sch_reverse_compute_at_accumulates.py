# expect: MT_ERR_INVALID_ARG 38:9 reverse_compute_at: block 'b' updates 'B', and the regions of 'X' that the iterations of loop 'j' (or of the loops around it) write may overlap: it would run again

@T.prim_func
def f1(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("binit"):
            vj = T.axis.remap("S", [j])
            B[vj] = T.float32(1)
    for r, j in T.grid(3, 8):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj] = A[vj] * T.float32(2)
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            B[vj] = B[vj] + X[vj]

@T.prim_func
def f2(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("binit"):
            vj = T.axis.remap("S", [j])
            B[vj] = T.float32(1)
    for r, j in T.grid(3, 8):
        with T.block("o"):
            vj = T.axis.remap("S", [j])
            X[vj] = A[vj] * T.float32(2)
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            B[vj] = B[vj] + X[vj]

@T.schedule(f2)
def sf2(sch):
    r, j = sch.get_loops(sch.get_block("o"))
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((8,), "float32")):
    return f2(a)
