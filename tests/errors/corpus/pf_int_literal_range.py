# expect: MT_ERR_TYPE 5:16 integer literal 300 is out of range for int8
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "int8")):
    for i in range(4):
        y[i] = 300
