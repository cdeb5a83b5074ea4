# expect: MT_ERR_TYPE 3:1 loop function 'f' stores into none of its buffers: it has no results
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        v = x[i] + y[i]
        T.evaluate(v)
