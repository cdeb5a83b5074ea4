# expect: MT_ERR_SYNTAX 3:5 expression statement has no effect; assign its value to a name or return it
def f(a: Tensor((2, 3), "float32")):
    a + a
    return a
