# expect: MT_ERR_SHAPE 10:39 T.wmma_fill reaches 256 elements of 'acc' from this one: not provably inside it
# A fragment operand is 256 elements: acc[128] reaches past acc's 256.
@T.prim_func
def k(x: T.Buffer((256,), "float16"), y: T.Buffer((256,), "float32")):
    T.func_attr({"kind": "cuda_kernel"})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        cs = T.alloc_buffer((256,), "float32", scope="shared")
        acc = T.alloc_buffer((256,), "float32", scope="wmma.accumulator")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            T.evaluate(T.wmma_fill(acc[128], 0.0))
            T.evaluate(T.wmma_store(cs[0], acc[128], 16))
            y[tx] = cs[tx]
