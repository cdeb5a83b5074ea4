# expect: MT_ERR_TYPE 5:9 operands of '+' have different dtypes: float32 and int32; convert one with T.Cast
@T.prim_func
def f(k: T.Buffer((4,), "int32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] += k[i]
