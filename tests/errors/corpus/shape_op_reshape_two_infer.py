# expect: MT_ERR_SHAPE 3:18 only one dimension can be -1 in 'reshape', but the shape is (-1, 3, -1)
def f(x: Tensor((2, 3), "float32")):
    out = reshape(x, (-1, 3, -1))
    return out
