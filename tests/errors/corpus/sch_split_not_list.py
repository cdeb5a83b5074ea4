# expect: MT_ERR_TYPE 14:33 sch.split(): factors is a list like [None, 8]
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

@T.schedule(mm)
def s(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    a, b = sch.split(i, factors=4)
