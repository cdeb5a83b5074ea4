# expect: MT_ERR_TYPE 3:7 parameter 'x' of a loop function needs T.Buffer(shape, dtype) or a scalar type such as T.int64
@T.prim_func
def f(x, y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = 1.0
