# Binary elementwise functions and operators, comparisons, where, astype
# (float32, int32, int64, bool; row and column broadcasts).
def f(x: Tensor(("n", 19), "float32"), y: Tensor((19,), "float32"), i: Tensor(("n", 19), "int32"), c: Tensor(("n", 1), "int64")):
    a = maximum(x, y) + minimum(x, y * 2.0) + power(abs(x) + 0.5, y)
    b = where(x > y, x // (abs(y) + 1.0), x % (abs(y) + 1.0)) + (abs(x) + 1.0) ** 0.5
    k = (i // 3 + i % 5 - i * 2) * (c.astype("int32") + 1)
    m = where(x >= 0.0, i != 0, x == y)
    return a, b, k, m, where(m, i.astype("float32"), -x), c * 3 - 1
