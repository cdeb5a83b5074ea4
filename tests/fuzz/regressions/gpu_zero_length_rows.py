# fuzz_graph (2026-11-27, target cuda, emulated): a row reduction over rows
# of no elements (log_softmax of a 5 x 0 tensor) divided by zero in the GPU
# row rule's register cache (src/schedule/gpu_reduce.c, choose_cache): the
# elements per thread were 0. A SIGFPE in mtc --target cuda.
def f(x: Tensor((5, 0), "float32")):
    return log_softmax(x) + softmax(x) * sum(x, axis=1, keepdims=True)
