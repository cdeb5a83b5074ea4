# expect: MT_ERR_INVALID_ARG 18:9 compute_at: block 'c' only prefetches 'b', it does not read it
@T.prim_func
def f(a: T.Buffer((8, 4), "float32"), y: T.Buffer((8,), "float32")):
    b = T.alloc_buffer((8,), "float32")
    for i, k in T.grid(8, 4):
        with T.block("p"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                b[vi] = 0.0
            b[vi] = b[vi] + a[vi, vk]
    for j in range(8):
        with T.block("c"):
            vj = T.axis.spatial(8, j)
            T.prefetch(b[vj + 1])
            y[vj] = a[vj, 0]
@T.schedule("f")
def s(sch):
    sch.compute_at(sch.get_block("p"), sch.get_loops(sch.get_block("c"))[0])
