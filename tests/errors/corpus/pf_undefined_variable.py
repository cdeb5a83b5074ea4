# expect: MT_ERR_NAME 5:18 unknown name 'j'
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[j]
