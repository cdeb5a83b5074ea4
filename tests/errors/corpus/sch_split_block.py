# expect: MT_ERR_TYPE 14:22 sch.split(): the first argument must be a loop, not a block
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
    b = sch.get_block("C")
    x, y = sch.split(b, factors=[None, 4])
