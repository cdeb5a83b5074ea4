# expect: MT_ERR_UNSUPPORTED 3:17 device("cuda:1") needs a GPU in the compilation: the target is cpu, and the CUDA backend is not available yet
def f(x: Tensor((2,), "float32")):
    with device("cuda:1"):
        y = x + 1.0
    return y
