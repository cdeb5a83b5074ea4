# expect: MT_ERR_TYPE 3:22 unknown dtype 'float8' (expected one of float32, float64, float16, bfloat16, int8, int32, int64, uint8, bool)
def f(x: Tensor((3,), "float32")):
    return astype(x, "float8")
