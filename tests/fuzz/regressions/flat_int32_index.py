# fuzz_graph finding (CI, 2026-11-29): a one-dimensional buffer indexed by an
# int32 expression (here a lane of an int32 vector, then % 16) kept its int32
# index through flatten_buffers, which cast only the indices of the buffers
# it flattened; the verifier refused the flat form (an internal error).
# flatten_buffers now casts every index to int64.
@T.prim_func
def tr(x: T.Buffer((11,), "float32"), k: T.Buffer((2,), "int32"), z: T.Buffer((2,), "float32")):
    z[0] = x[k[1] % 11]
    z[1] = x[T.Shuffle([k[T.Ramp(0, 1, 2)]], [1]) % 11]
