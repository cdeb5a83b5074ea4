# check_bounds carried a check out of a buffer's allocation: the index
# l + t[0] loads t, allocated inside the loop over l, and the check in
# front of the loop read a t out of scope (the TIR verifier: "load from 't'
# names a buffer that is neither a parameter nor allocated in scope";
# found by fuzz_graph in CI, 2026-11-29). t is never written here: the
# check stays inside t's allocation, and the value is undefined (the
# binding of l beyond vl's domain of 4 makes the function checked without
# the option).
@T.prim_func
def f(X: T.Buffer((16,), "float32")):
    for l in range(8):
        t = T.alloc_buffer((1,), "int64")
        with T.block("a"):
            vl = T.axis.spatial(4, l)
            X[vl + t[0]] = T.float32(1)
