# Every unary elementwise function of the language, for target cuda (with
# the other ops_*.py: every op compiles to CUDA C that NVRTC takes without
# spills, and runs as the CPU does; test_cuda_text, test_gpu_emulation).
def f(x: Tensor(("n", 37), "float32")):
    p = abs(x) + 1.0
    a = exp(x) + log(p) + sqrt(p) + rsqrt(p) + sin(x) + cos(x)
    b = tanh(x) + sigmoid(x) + erf(x) + floor(x) + ceil(x) + round(x * 3.0)
    c = relu(x) + abs(x) + sign(x) + neg(x) + gelu(x) + gelu(x, approximate="tanh")
    return a, b, c
