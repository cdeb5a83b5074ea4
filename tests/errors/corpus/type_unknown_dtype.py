# expect: MT_ERR_TYPE 2:25 unknown dtype 'float33' (expected one of float32, float64, float16, bfloat16, int8, int32, int64, uint8, bool)
def f(a: Tensor((2, 3), "float33")):
    return a
