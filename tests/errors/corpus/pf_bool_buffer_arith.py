# expect: MT_ERR_TYPE 5:39 arithmetic '+' on bool operands
@T.prim_func
def f(x: T.Buffer((4,), "bool"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = T.Cast("float32", x[i] + x[i])
