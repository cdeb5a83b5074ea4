# expect: MT_ERR_NAME 9:31 loop variable 'i' is used inside a block, which sees the loops around it only through its iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[i, vk]
