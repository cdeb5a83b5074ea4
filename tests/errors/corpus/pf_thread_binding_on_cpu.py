# expect: MT_ERR_UNSUPPORTED 4:5 a loop bound to threadIdx.x runs on a GPU, but loop function 'f' runs on the CPU
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        y[i] = x[i] * 2.0
