# expect: MT_ERR_TYPE 3:20 operands of 'add' have different dtypes: 'a * 2.0' is float32 but 'b' is int64; convert one with astype
def f(a: Tensor((4,), "float32"), b: Tensor((4,), "int64")):
    return a * 2.0 + b
