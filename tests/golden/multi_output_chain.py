# passes: fuse_ops fuse_tir dead_code
def f(x: Tensor((8,), "float64"), y: Tensor((8,), "float64")):
    a = x + y
    b = a * 2
    c = b / y
    return c, a, b
