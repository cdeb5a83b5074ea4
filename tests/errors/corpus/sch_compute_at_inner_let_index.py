# expect: MT_ERR_INVALID_ARG 21:9 compute_at: block 'c' indexes 'X' through 't', a let inside loop 'j0'
@T.prim_func
def f(A: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("p"):
            vi = T.axis.remap("S", [i])
            X[vi] = A[vi] * T.float32(2)
    for j0 in range(4):
        for j1 in range(4):
            t = j0 * 4 + j1
            with T.block("c"):
                vj = T.axis.spatial(16, j0 * 4 + j1)
                Y[vj] = X[t]

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    p = sch.get_block("p")
    j0, j1 = sch.get_loops(c)
    sch.compute_at(p, j0)

def main(a: Tensor((16,), "float32")):
    return f(a)
