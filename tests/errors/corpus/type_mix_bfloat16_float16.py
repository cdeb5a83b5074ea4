# expect: MT_ERR_TYPE 3:14 operands of 'add' have different dtypes: 'a' is bfloat16 but 'b' is float16; convert one with astype
def f(a: Tensor((4,), "bfloat16"), b: Tensor((4,), "float16")):
    return a + b
