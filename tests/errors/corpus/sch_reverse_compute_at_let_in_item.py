# expect: MT_ERR_INVALID_ARG 25:9 reverse_compute_at: block 'b' updates 'B', and the regions of 'X' that the iterations of loop 'j' (or of the loops around it) write may overlap: it would run again
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
    X = T.alloc_buffer((1,), "float32")
    for v in range(1):
        with T.block("binit"):
            vv = T.axis.remap("S", [v])
            B[vv] = T.float32(1)
    for i in range(4):
        t = 0 - i
        for j in range(1):
            with T.block("o"):
                vi = T.axis.spatial(4, i)
                vx = T.axis.spatial(1, i + t + j * 4)
                X[vx] = A[vi]
    for v in range(1):
        with T.block("b"):
            vv = T.axis.remap("S", [v])
            B[vv] = B[vv] + X[vv]

@T.schedule(f)
def s(sch):
    o = sch.get_block("o")
    i, j = sch.get_loops(o)
    sch.reverse_compute_at(sch.get_block("b"), j)

def main(a: Tensor((4,), "float32")):
    return f(a)
