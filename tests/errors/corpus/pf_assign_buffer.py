# expect: MT_ERR_TYPE 6:5 cannot assign to buffer 'x'; store into an element: x[...] = ...
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i]
    x = 1.0
