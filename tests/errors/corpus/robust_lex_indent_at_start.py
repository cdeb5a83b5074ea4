# expect: MT_ERR_SYNTAX 2:5 unexpected indent
    def f(a: Tensor((2, 3), "float32")):
        return a
