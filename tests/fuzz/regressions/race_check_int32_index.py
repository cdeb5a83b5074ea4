# parallel's race check flattened the store's indices to one, and an int32
# index (T.int32(vi)) met the int64 row length: "operands of '*' disagree:
# int32 vs int64" (an internal error; found by fuzz_tir). Now refused: the
# check does not see through the cast, and what it cannot show disjoint it
# refuses.
@T.prim_func
def f(A: T.Buffer((64,), "float32"), X: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("a"):
            vi, vj = T.axis.remap("SS", [i, j])
            X[T.int32(vi), vj] = A[vi * 8 + vj]

@T.schedule(f)
def s(sch):
    i, j = sch.get_loops(sch.get_block("a"))
    sch.parallel(i)
