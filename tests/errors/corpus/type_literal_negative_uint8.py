# expect: MT_ERR_TYPE 3:16 integer literal -1 is out of range for uint8 tensor 'u' in 'multiply' (0 to 255); convert the tensor with astype first
def f(u: Tensor((8,), "uint8")):
    return u * -1
