# expect: MT_ERR_NAME 7:17 loop variable 'i' is used inside a block, which sees the loops around it only through its iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            t = i + 0
            B[vi] = A[t]
