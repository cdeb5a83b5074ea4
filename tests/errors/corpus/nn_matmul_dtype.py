# expect: MT_ERR_TYPE 3:17 operands of 'matmul' have different dtypes: 'a' is float32 but 'b' is float64; convert one with astype
def f(a: Tensor((2, 3), "float32"), b: Tensor((3, 4), "float64")):
    out = matmul(a, b)
    return out
