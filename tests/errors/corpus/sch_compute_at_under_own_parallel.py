# expect: MT_ERR_INVALID_ARG 27:9 compute_at (loop 'i' is parallel): iterations of loop 'i' may touch the same elements of 'X' (written by block 'p'): no dimension of it is split among them
@T.prim_func
def f(B: T.Buffer((80, 2000), "float32"), Y: T.Buffer((64, 16), "float32"), Z: T.Buffer((4096,), "float32")):
    X = T.alloc_buffer((80,), "float32")
    for j, k in T.grid(80, 2000):
        with T.block("p"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                X[vj] = T.float32(0)
            X[vj] = X[vj] + B[vj, vk]
    for i in T.parallel(64):
        for j in range(16):
            with T.block("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi + vj]
        with T.block("z"):
            vi = T.axis.spatial(64, i)
            Z[vi * vi] = T.float32(1)

# the loop function's own parallel loop writes Z at indices the check cannot
# read (safe: i * i); that excuses Z, not X, which compute_at makes racy
@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    p = sch.get_block("p")
    i, j = sch.get_loops(c)
    sch.compute_at(p, j)
