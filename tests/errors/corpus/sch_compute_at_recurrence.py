# expect: MT_ERR_INVALID_ARG 17:9 compute_at: block 'x' reads 'X', the buffer it writes, at another element (a recurrence: the region would be computed in the consumer's order)
@T.prim_func
def scan(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for j in range(8):
        with T.block("x"):
            vj = T.axis.remap("S", [j])
            X[vj] = T.if_then_else(vj > 0, X[T.max(vj - 1, 0)], T.float32(0)) + A[vj]
    for j in range(8):
        with T.block("b"):
            vj = T.axis.remap("S", [j])
            B[vj] = X[7 - vj]

@T.schedule(scan)
def s(sch):
    (j,) = sch.get_loops(sch.get_block("b"))
    sch.compute_at(sch.get_block("x"), j)

def main(a: Tensor((8,), "float32")):
    return scan(a)
