# expect: MT_ERR_INVALID_ARG 24:9 compute_at (loop 'i' is parallel): iterations of loop 'i' may touch the same elements of 'X' (written by block 'p'): no dimension of it is split among them
@T.prim_func
def f(B: T.Buffer((80, 2000), "float32"), Y: T.Buffer((64, 16), "float32")):
    X = T.alloc_buffer((80,), "float32")
    for j, k in T.grid(80, 2000):
        with T.block("p"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                X[vj] = T.float32(0)
            X[vj] = X[vj] + B[vj, vk]
    for i, j in T.grid(64, 16):
        with T.block("c"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi + vj]

# parallel first, then the producer moved under it: neighbouring iterations
# would compute X[i + j] at once (init and sums interleaved)
@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    p = sch.get_block("p")
    i, j = sch.get_loops(c)
    sch.parallel(i)
    sch.compute_at(p, j)
