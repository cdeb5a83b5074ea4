# expect: MT_ERR_TYPE 3:17 a dimension must be an integer known at compile time or x.shape[i]
def f(x: Tensor((3,), "float32")):
    return ones(x)
