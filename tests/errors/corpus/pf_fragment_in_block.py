# expect: MT_ERR_TYPE 7:33 fragment 'acc' (scope wmma.accumulator) is allocated in a block; the T.wmma_* intrinsics that use fragments run outside blocks, so allocate it in the kernel, outside its phases
@T.prim_func
def f(A: T.Buffer((16,), "float32"), X: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("a"):
            vi = T.axis.spatial(16, i)
            acc = T.alloc_buffer((256,), "float32", scope="wmma.accumulator")
            X[vi] = A[vi]

# Found by fuzz_graph: for target cuda the GPU fallback bound the loop to
# threads, and the block's fragment ended up allocated inside the phase (an
# internal error).
