# expect: MT_ERR_LIMIT 15:59 kernel too large: more than 2048 operations after unrolling
def f(a: Tensor((2,), "float32")):
    for i0 in range(16):
        for i1 in range(16):
            for i2 in range(16):
                for i3 in range(16):
                    for i4 in range(16):
                        for i5 in range(16):
                            for i6 in range(16):
                                for i7 in range(16):
                                    for i8 in range(16):
                                        for i9 in range(16):
                                            for i10 in range(16):
                                                for i11 in range(16):
                                                    a = a * 2.0
    return a
