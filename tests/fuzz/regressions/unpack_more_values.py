# fuzz finding: more values than names in a tuple assignment; the values past
# the names were built with names read from the uninitialized rest of the
# names array (a wild pointer: ASan SEGV). Expected: "cannot unpack 3 values
# into 2 names".
def f(a: Tensor((2, 3), "float32")):
    x, y = a, a, not a
    return x
