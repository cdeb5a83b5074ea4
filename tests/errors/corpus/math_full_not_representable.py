# expect: MT_ERR_TYPE 3:16 fill value 2.5 of 'full' is not representable as int32
def f():
    return full((3,), 2.5, "int32")
