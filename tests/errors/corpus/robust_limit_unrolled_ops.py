# expect: MT_ERR_LIMIT 7:27 kernel too large: more than 2048 operations after unrolling
def f(a: Tensor((2, 3), "float32")):
    for i in range(16):
        for j in range(16):
            for k in range(16):
                for l in range(16):
                    a = a + 1.0
    return a
