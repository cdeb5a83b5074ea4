def f(a: Tensor(("n", 37), "float32"), b: Tensor((37,), "float32")):
    return exp(a) * b + 1.0 - tanh(a)
