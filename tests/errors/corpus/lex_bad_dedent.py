# expect: MT_ERR_SYNTAX 4:5 unindent does not match any outer indentation level
def f(a: Tensor((2, 3), "float32")):
        out = a
    return out
