# expect: MT_ERR_INVALID_ARG 19:9 compute_at: block 'cp' indexes 'X' through 't', a let inside it
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    X = T.alloc_buffer((4,), "float32")
    for v in range(4):
        with T.block("fill"):
            vv = T.axis.remap("S", [v])
            X[vv] = T.float32(0)
    for i in range(4):
        with T.block("cp"):
            vi = T.axis.spatial(4, i)
            t = 3 - vi
            B[vi] = X[t] + A[vi]

@T.schedule(f)
def s(sch):
    c = sch.get_block("cp")
    i, = sch.get_loops(c)
    sch.compute_at(sch.get_block("fill"), i)

def main(a: Tensor((4,), "float32")):
    return f(a)
