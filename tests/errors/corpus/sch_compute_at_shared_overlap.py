# expect: MT_ERR_INVALID_ARG 22:9 compute_at: 'X' is touched by blocks 'upd' and 'cp', and the regions of it that the iterations of loop 'j' (or of the loops around it) touch may overlap
@T.prim_func
def acc(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("fill"):
            vj = T.axis.remap("S", [j])
            X[vj] = T.float32(0)
    for i, j in T.grid(4, 8):
        with T.block("upd"):
            vi, vj = T.axis.remap("RS", [i, j])
            X[vj] = X[vj] + A[vi, vj]
        with T.block("cp"):
            vj = T.axis.remap("S", [j])
            B[vj] = X[vj]

@T.schedule(acc)
def s(sch):
    f = sch.get_block("fill")
    u = sch.get_block("upd")
    i, j = sch.get_loops(u)
    sch.compute_at(f, j)

def main(a: Tensor((4, 8), "float32")):
    return acc(a)
