# expect: MT_ERR_UNSUPPORTED 3:9 lambda expressions are only allowed as a schedule's index map (sch.transform_layout)
def f(a: Tensor((2, 3), "float32")):
    g = lambda x: x
    return a
