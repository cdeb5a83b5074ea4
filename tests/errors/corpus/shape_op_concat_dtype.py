# expect: MT_ERR_TYPE 3:17 tensors in 'concat' have different dtypes: 'a' is float32 but 'b' is int32; convert one with astype
def f(a: Tensor((2, 3), "float32"), b: Tensor((2, 3), "int32")):
    out = concat([a, b])
    return out
