# expect: MT_ERR_TYPE 3:16 fill value 300 of 'full' is not representable as uint8
def f():
    return full((3,), 300, dtype="uint8")
