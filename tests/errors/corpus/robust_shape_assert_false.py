# expect: MT_ERR_SHAPE 3:5 assertion is always false: need three rows
def f(a: Tensor((2, 3), "float32")):
    assert a.shape[0] == 3, "need three rows"
    return a
