# expect: MT_ERR_TYPE 3:16 integer literal 200 is out of range for int8 tensor 'x' in 'less' (-128 to 127); convert the tensor with astype first
def f(x: Tensor((8,), "int8")):
    return x < 200
