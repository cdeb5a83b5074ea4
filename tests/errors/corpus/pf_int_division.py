# expect: MT_ERR_TYPE 5:21 '/' of int32 operands; use '//' (floor) or T.truncdiv
@T.prim_func
def f(x: T.Buffer((4,), "int32"), y: T.Buffer((4,), "int32")):
    for i in range(4):
        y[i] = x[i] / 2
