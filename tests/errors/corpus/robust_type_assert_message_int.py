# expect: MT_ERR_TYPE 3:29 the message of 'assert' must be a string
def f(a: Tensor((2, 3), "float32")):
    assert a.shape[0] == 2, 5
    return a
