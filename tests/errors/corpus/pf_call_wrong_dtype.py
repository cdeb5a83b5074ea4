# expect: MT_ERR_TYPE 8:14 argument 'x' of 'f' must be R.Tensor((4,), dtype="float32"), got int32 (4,)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i]

def main(a: Tensor((4,), "int32")):
    return f(a)
