# expect: MT_ERR_SHAPE 3:18 axis 2 is out of range for a tensor of rank 2 in 'softmax'
def f(x: Tensor((2, 3), "float32")):
    out = softmax(x, axis=2)
    return out
