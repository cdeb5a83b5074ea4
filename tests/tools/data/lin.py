def f(x: Tensor(("n", 3), "float32"), w: Tensor((3, 2), "float32"), b: Tensor((2,), "float32")):
    return relu(x @ w + b)
