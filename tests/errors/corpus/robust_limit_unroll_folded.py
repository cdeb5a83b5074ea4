# expect: MT_ERR_LIMIT 10:35 kernel too large: more than 1048576 statements and expressions to build after unrolling
# Bodies that fold to constants emit no operations; the builder still
# counts the statements it builds (this once ran for minutes).
def f(a: Tensor((2,), "float32")):
    for i0 in range(16):
        for i1 in range(16):
            for i2 in range(16):
                for i3 in range(16):
                    for i4 in range(16):
                        x = (i0 + i1) * 2
    return a
