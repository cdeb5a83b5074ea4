# An unrolled loop rebinding one name 2048 times: naming the SSA values
# (y, y_1, ... y_2047) searched a list for every candidate, cubic in the
# count (minutes at 4096); a hash set with per-name counters makes it linear.
def f(x: Tensor((4,), "float32")):
    y = x
    for i in range(16):
        for j in range(16):
            for k in range(8):
                y = y + x
    return y
