# expect: MT_ERR_TYPE 3:21 'dtype' of 'zeros' must be a dtype name such as "float32"
def f():
    z = zeros((2,), float32)
    return z
