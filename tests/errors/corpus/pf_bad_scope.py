# expect: MT_ERR_TYPE 4:47 unknown scope 'texture' (expected "global", "shared", "local", "wmma.matrix_a", "wmma.matrix_b" or "wmma.accumulator")
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    t = T.alloc_buffer((4,), "float32", scope="texture")
    for i in range(4):
        t[i] = x[i]
        y[i] = t[i]
