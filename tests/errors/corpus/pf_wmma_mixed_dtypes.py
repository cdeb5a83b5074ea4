# expect: MT_ERR_TYPE 12:13 ill-formed loop function 'k': T.wmma_mma of 'a' (float16) and 'b' (bfloat16): the tensor cores take one input dtype
# The tensor cores multiply two inputs of one dtype: float16 by bfloat16 is refused.
@T.prim_func
def k(y: T.Buffer((256,), "float32")):
    T.func_attr({"kind": "cuda_kernel"})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        acc = T.alloc_buffer((256,), "float32", scope="wmma.accumulator")
        a = T.alloc_buffer((256,), "float16", scope="wmma.matrix_a")
        b = T.alloc_buffer((256,), "bfloat16", scope="wmma.matrix_b")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            T.evaluate(T.wmma_fill(acc[0], 0.0))
            T.evaluate(T.wmma_mma(acc[0], a[0], b[0]))
            y[tx] = T.float32(0)
