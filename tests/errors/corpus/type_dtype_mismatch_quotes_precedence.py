# expect: MT_ERR_TYPE 3:34 operands of 'add' have different dtypes: '(a + 1.5) * (-a) ** 2' is float32 but 'b' is int32; convert one with astype
def f(a: Tensor((4,), "float32"), b: Tensor((4,), "int32")):
    return (a  +  1.5) * (-a)**2 + b
