# expect: MT_ERR_INVALID_ARG 21:9 decompose_reduction: block 's' is bound through 'kk', a let
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), X: T.Buffer((4,), "float32")):
    for i in range(4):
        for k0 in range(2):
            kk = k0 * 4
            for k1 in range(4):
                with T.block("s"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(8, kk + k1)
                    with T.init():
                        X[vi] = T.float32(0)
                    X[vi] = X[vi] + A[vi, vk]
# the reduce variable is bound through a let of k0: which loops bind it
# cannot be read from the bindings (k0 would look like a loop that binds nothing)

@T.schedule(f)
def s(sch):
    b = sch.get_block("s")
    i, k0, k1 = sch.get_loops(b)
    sch.decompose_reduction(b, k1)
