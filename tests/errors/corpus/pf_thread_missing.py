# expect: MT_ERR_TYPE 4:30 T.thread_binding needs thread="threadIdx.x" (or blockIdx.x, ...)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4):
        y[i] = x[i]
