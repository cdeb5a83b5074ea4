# expect: MT_ERR_NAME 9:51 loop variable 'i' is used inside a block, which sees the loops around it only through its iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in range(8):
        with T.block("o"):
            vi = T.axis.spatial(8, i)
            for j in range(4):
                with T.block("in"):
                    vi2, vj = T.axis.remap("SS", [i, j])
                    B[vi2, vj] = A[vi2, vj]

# The inner block may bind loop j, inside the outer block, but not loop
# i: the outer block reaches i only through vi.
