# expect: MT_ERR_NAME 5:19 unknown function 'exp' in a loop function (functions here are T.exp, T.max, ...)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = exp(x[i])
