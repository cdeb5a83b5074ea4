# expect: MT_ERR_SHAPE 10:46 T.wmma_load_a reaches 61456 elements of 'xs' from this one: not provably inside it
# The 16 rows of 4096 that T.wmma_load_a reads from xs[380] run past xs.
@T.prim_func
def k(x: T.Buffer((256,), "float16"), y: T.Buffer((256,), "float32")):
    T.func_attr({"kind": "cuda_kernel"})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        xs = T.alloc_buffer((384,), "float16", scope="shared")
        a = T.alloc_buffer((256,), "float16", scope="wmma.matrix_a")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            T.evaluate(T.wmma_load_a(a[0], xs[380], 4096))
            y[tx] = T.float32(0)
