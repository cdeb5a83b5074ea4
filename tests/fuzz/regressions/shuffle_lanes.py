# A seed for the fuzzers: T.Shuffle of vector lets (a 4 x 4 transpose in
# two rounds of two-vector shuffles), a one-lane shuffle used as a scalar
# and one inside an index (shuffle_lanes_gpu.py: in a GPU kernel). Not a
# finding: the construct is new, and the fuzzers' dictionary alone did not
# make one (6 million fuzz_tir runs, no input with a T.Shuffle).
@T.prim_func
def tr(x: T.Buffer((16,), "float32"), k: T.Buffer((2,), "int64"), y: T.Buffer((16,), "float32"),
       z: T.Buffer((2,), "float32")):
    r0 = x[T.Ramp(0, 1, 4)]
    r1 = x[T.Ramp(4, 1, 4)]
    r2 = x[T.Ramp(8, 1, 4)]
    r3 = x[T.Ramp(12, 1, 4)]
    a0 = T.Shuffle([r0, r1], [0, 4, 2, 6])
    a1 = T.Shuffle([r0, r1], [1, 5, 3, 7])
    a2 = T.Shuffle([r2, r3], [0, 4, 2, 6])
    a3 = T.Shuffle([r2, r3], [1, 5, 3, 7])
    y[T.Ramp(0, 1, 4)] = T.Shuffle([a0, a2], [0, 1, 4, 5])
    y[T.Ramp(4, 1, 4)] = T.Shuffle([a1, a3], [0, 1, 4, 5])
    y[T.Ramp(8, 1, 4)] = T.Shuffle([a0, a2], [2, 3, 6, 7])
    y[T.Ramp(12, 1, 4)] = T.Shuffle([a1, a3], [2, 3, 6, 7])
    z[0] = T.Shuffle([r1], [2]) + 1.0
    z[1] = x[T.Shuffle([k[T.Ramp(0, 1, 2)]], [1]) % 16]
