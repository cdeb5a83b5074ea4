# A seed for the fuzzers: T.Shuffle in a GPU kernel (CUDA C takes the
# lanes one by one), whole and of one lane (a scalar in a vector product).
# Compiled for cuda (emulated); on the CPU a user error (a thread binding).
@T.prim_func
def g(x: T.Buffer((64,), "float32"), y: T.Buffer((64,), "float32")):
    for t in T.thread_binding(16, thread="threadIdx.x"):
        v = x[T.Ramp(t * 4, 1, 4)]
        y[T.Ramp(t * 4, 1, 4)] = T.Shuffle([v], [3, 2, 1, 0]) * T.Shuffle([v], [0])
