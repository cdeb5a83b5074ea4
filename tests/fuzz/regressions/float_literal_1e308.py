# fuzz finding: a float constant beyond int64 (1e308) was converted to
# int64 with a plain cast when the constant was made (undefined behaviour).
def f(x: Tensor((3, 8), "float32")):
    k = 2 * 3 + 1e308 - 1
    y = x * 1e308 + x * -1e300
    z = x * (1e308 * 10.0) + 3.5e19
    return y * k, z
