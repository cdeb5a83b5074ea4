# expect: MT_ERR_INVALID_ARG 16:9 transform_layout: output 2 of the index map (0) uses none of its parameters
@T.prim_func
def f(A: T.Buffer((8, 32), "float32"), C: T.Buffer((8, 32), "float32")):
    B = T.alloc_buffer((8, 32), "float32")
    for i, j in T.grid(8, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)

@T.schedule(f)
def s(sch):
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (i, j, 0))
