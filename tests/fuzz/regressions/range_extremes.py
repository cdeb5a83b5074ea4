# range() bounds at the ends of int64: the trip count (stop - start + step
# - 1) overflowed, and so did the unrolled variable past its last value.
def f(x: Tensor((2,), "float32")):
    y = x
    for i in range(9223372036854775806, 9223372036854775807, 4):
        y = y + 1.0
    for j in range(-9223372036854775807, 9223372036854775807, 4611686018427387904):
        y = y + 1.0
    for k in range(9223372036854775807, -9223372036854775807, -9223372036854775807):
        y = y * 2.0
    return y
