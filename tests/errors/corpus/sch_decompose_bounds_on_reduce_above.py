# expect: MT_ERR_INVALID_ARG 19:9 decompose_reduction: the bounds of loop 'i' depend on loop 'k'
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), C: T.Buffer((8,), "float32")):
    for k in range(4):
        for i in range(8 - k):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(4, k)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vk, vi]

# an init before i under `if k == 0:` would start the elements i < 8 once,
# but with i's extent a function of k the elements one k visits are not
# another's: refused
@T.schedule(f)
def s(sch):
    k, i = sch.get_loops(sch.get_block("C"))
    sch.decompose_reduction(sch.get_block("C"), i)
