# expect: MT_ERR_TYPE 3:16 operands of 'where' have different dtypes: 'a' is float32 but 'b' is float64; convert one with astype
def f(c: Tensor((3,), "bool"), a: Tensor((3,), "float32"), b: Tensor((3,), "float64")):
    out = where(c, a, b)
    return out
