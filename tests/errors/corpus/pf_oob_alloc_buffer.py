# expect: MT_ERR_SHAPE 6:11 index 'i' ranges over [0, 8), out of bounds for dim 0 of 't' (size 4)
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    t = T.alloc_buffer((4,), "float32")
    for i in range(8):
        t[i] = x[i]
        y[i] = t[i]
