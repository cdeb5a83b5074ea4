# expect: MT_ERR_INVALID_ARG 25:9 compute_at: 'X' is touched by blocks 'upd' and 'cp', and the regions of it that the iterations of loop 'j' (or of the loops around it) touch may overlap
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    X = T.alloc_buffer((4,), "float32")
    for v in range(4):
        with T.block("fill"):
            vv = T.axis.remap("S", [v])
            X[vv] = T.float32(0)
    for i in range(4):
        t = 3 - i
        for j in range(1):
            with T.block("upd"):
                vi = T.axis.spatial(4, i)
                vx = T.axis.spatial(4, i + t + j * 4)
                X[vx] = X[vx] + A[vi]
            with T.block("cp"):
                vi = T.axis.spatial(4, i)
                vx = T.axis.spatial(4, i + t + j * 4)
                B[vi] = X[vx]

@T.schedule(f)
def s(sch):
    u = sch.get_block("upd")
    i, j = sch.get_loops(u)
    sch.compute_at(sch.get_block("fill"), j)

def main(a: Tensor((4,), "float32")):
    return f(a)
