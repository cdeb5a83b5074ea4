# expect: MT_ERR_TYPE 3:26 range() step must not be zero
def f(a: Tensor((2, 3), "float32")):
    for i in range(0, 4, 0):
        a = a + 1.0
    return a
