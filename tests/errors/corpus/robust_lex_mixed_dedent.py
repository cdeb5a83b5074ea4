# expect: MT_ERR_SYNTAX 5:7 unindent does not match any outer indentation level
def f(a: Tensor((2, 3), "float32")):
    if True:
        out = a
      return out
