# A buffer allocated in a loop and shaped by its variable: remove_unit_loops
# replaced the loop of one iteration by its body with i := 0 in the
# statements but not in t's shape, which then named 'i' out of its scope (an
# internal error; found by fuzz_graph). Such shapes are refused now.
@T.prim_func
def f(A: T.Buffer((7,), "float32"), B: T.Buffer((6,), "float32")):
    for i in range(1):
        t = T.alloc_buffer((i + 1,), "float32")
        with T.block("b"):
            vi = T.axis.spatial(7, i)
            B[vi] = A[vi] + t[0]
