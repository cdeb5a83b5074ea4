# expect: MT_ERR_INVALID_ARG 18:9 reorder: loops 'k' and 'l' are not in one nest
@T.prim_func
def f(A: T.Buffer((4, 4, 4), "float32"), B: T.Buffer((4, 4, 4), "float32"), C: T.Buffer((4, 4, 4), "float32")):
    for i, j in T.grid(4, 4):
        for k in range(4):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
        for l in range(4):
            with T.block("C"):
                vi, vj, vl = T.axis.remap("SSS", [i, j, l])
                C[vi, vj, vl] = A[vi, vj, vl] + T.float32(1)

@T.schedule(f)
def s(sch):
    i, j, k = sch.get_loops(sch.get_block("B"))
    i2, j2, l = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, l)
