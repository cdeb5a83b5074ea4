# expect: MT_ERR_NAME 5:9 unknown name 'z'
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        z[i] = x[i]
