# expect: MT_ERR_NAME 7:33 loop variable 'j' is used inside a block, which sees the loops around it only through its iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def mm(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(j + 1, j)
            vk = T.axis.reduce(8, k)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk]

# A block's domain is its own: decompose_reduction copied the extent
# 'j + 1' into an init block under loops of its own (an internal error).
