# expect: MT_ERR_INVALID_ARG 20:9 reverse_compute_at: block 'b' reduces over all of 'X' in each iteration of loop 'r' (or of the loops around it): the iterations' regions may overlap
@T.prim_func
def whole(A: T.Buffer((3, 8), "float32"), B: T.Buffer((1,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    with T.block("binit"):
        B[0] = T.float32(0)
    for r, k in T.grid(3, 8):
        with T.block("o"):
            vr, vk = T.axis.remap("SS", [r, k])
            X[vk] = A[vr, vk]
    for k in range(8):
        with T.block("b"):
            vk = T.axis.remap("R", [k])
            B[0] = B[0] + X[vk]

@T.schedule(whole)
def s(sch):
    o = sch.get_block("o")
    r, k = sch.get_loops(o)
    sch.reverse_compute_at(sch.get_block("b"), r)

def main(a: Tensor((3, 8), "float32")):
    return whole(a)
