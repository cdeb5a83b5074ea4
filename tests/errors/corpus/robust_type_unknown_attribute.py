# expect: MT_ERR_TYPE 3:13 tensors have no attribute 'foo' (known: T, shape, ndim, dtype, astype)
def f(a: Tensor((2, 3), "float32")):
    return a.foo
