# expect: MT_ERR_SYNTAX 5:16 T.reads belongs in the header of a block, before its body
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        T.reads(x[i])
        y[i] = x[i]
