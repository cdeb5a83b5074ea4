# expect: MT_ERR_TYPE 3:16 'full' missing required argument 'fill_value'
def f():
    return full((3,))
