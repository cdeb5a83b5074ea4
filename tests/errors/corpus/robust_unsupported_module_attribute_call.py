# expect: MT_ERR_UNSUPPORTED 3:13 only functions called by name and x.astype() are supported
def f(a: Tensor((2, 3), "float32")):
    return R.nope(a)
