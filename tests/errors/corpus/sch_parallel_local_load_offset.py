# expect: MT_ERR_INVALID_ARG 17:9 parallel: iterations of loop 'l' may touch the same elements of 'X' (written by block 'a'): no dimension of it is split among them
@T.prim_func
def f(X: T.Buffer((16,), "float32")):
    for l in range(8):
        t = T.alloc_buffer((1,), "int64")
        with T.block("a"):
            vl = T.axis.spatial(8, l)
            t[0] = 7 - vl
            X[vl + t[0]] = T.float32(1)

# t is each iteration's own: t[0] = 7 - l differs between them, and every
# iteration stores X[7] (an index term that loads is fixed only when
# nothing under the loop writes what it loads)
@T.schedule(f)
def s(sch):
    l = sch.get_loops(sch.get_block("a"))[0]
    sch.parallel(l)
