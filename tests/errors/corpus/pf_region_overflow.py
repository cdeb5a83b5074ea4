# expect: MT_ERR_SHAPE 7:23 region 9223372036854775807:-2: its size does not fit in int64
@T.prim_func
def f(A: T.Buffer((16,), "float32"), X: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("a"):
            vi = T.axis.spatial(16, i)
            T.reads(A[9223372036854775807:-2])
            X[vi] = A[vi]

# Found by fuzz_graph: the region's size, hi - lo, overflowed int64 (UBSan).
