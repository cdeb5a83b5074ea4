# expect: MT_ERR_NAME 8:20 loop variable 'i' is used inside a block, which sees the loops around it only through its iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)
@T.prim_func
def mm(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[-i, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

@T.schedule(mm)
def schedule_mm(sch):
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, factors=[None, 8])
    sch.decompose_reduction(blk, k)

# Found by fuzz_tir: the init indexed C by the loop variable itself, and
# decompose_reduction moved the init under loops of its own, leaving 'i_1'
# outside the loop that defines it (an internal error). Blocks reach the
# loops around them only through their bindings, as in TVM.
