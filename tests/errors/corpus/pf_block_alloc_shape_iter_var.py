# expect: MT_ERR_TYPE 7:32 the shape of 't' uses iteration variable 'vi': a buffer has one shape for every iteration (use the largest, a constant or a symbolic dim)
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            t = T.alloc_buffer((vi + 1,), "float32")
            for j in range(n):
                t[j] = B[j]
            A[vi] = t[0]
