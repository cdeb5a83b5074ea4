# expect: MT_ERR_LIMIT 9:17 kernel too large: more than 2048 operations after unrolling
# Each unrolled copy holds a run-time loop (116 trips > unroll_threshold)
# with an empty body: a loop is an operation (found by fuzz_compile: 4,096
# such loops made a 24,576-instruction program).
def f(a: Tensor((2,), "float32")):
    for i0 in range(16):
        for i1 in range(16):
            for i2 in range(16):
                for i3 in range(116):
                    for i4 in range(-7):
                        a = a * 2.0
    return a
