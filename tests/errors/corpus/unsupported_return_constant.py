# expect: MT_ERR_UNSUPPORTED 3:12 returning a constant is not supported yet; compute it from a parameter
def f(a: Tensor((2, 3), "float32")):
    return 1
