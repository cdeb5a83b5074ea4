# expect: MT_ERR_UNSUPPORTED 3:6 tensors are immutable values in graph functions; assign to a name instead
def f(a: Tensor((2, 3), "float32")):
    a[0] = 1
    return a
