# expect: MT_ERR_NAME 4:41 unknown thread 'threadIdx.w' (expected blockIdx.x/y/z or threadIdx.x/y/z)
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="threadIdx.w"):
        y[i] = x[i]
