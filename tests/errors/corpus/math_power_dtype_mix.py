# expect: MT_ERR_TYPE 3:17 operands of 'power' have different dtypes: 'a' is float32 but 'b' is int32; convert one with astype
def f(a: Tensor((4,), "float32"), b: Tensor((4,), "int32")):
    return power(a, b)
