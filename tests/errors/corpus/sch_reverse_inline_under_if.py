# expect: MT_ERR_INVALID_ARG 22:9 reverse_compute_inline: block 'c' is under an if: it may not store all of 'Y'
@T.prim_func
def f(A: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("w0"):
            vi = T.axis.remap("S", [i])
            Y[vi] = T.float32(0)
    for i in range(8):
        with T.block("p"):
            vi = T.axis.remap("S", [i])
            X[vi] = A[vi] * T.float32(2)
    for i in range(8):
        if i < 4:
            with T.block("c"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

@T.schedule(f)
def s(sch):
    c = sch.get_block("c")
    sch.reverse_compute_inline(c)
