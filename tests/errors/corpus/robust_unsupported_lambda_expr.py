# expect: MT_ERR_UNSUPPORTED 3:13 lambda expressions are only allowed as a schedule's index map (sch.transform_layout)
def f(a: Tensor((2, 3), "float32")):
    return (lambda: a)()
