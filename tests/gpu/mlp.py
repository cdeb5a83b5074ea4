def f(x: Tensor(("n", 784), "float32"), w0: Tensor((128, 784), "float32"), b0: Tensor((128,), "float32"), w1: Tensor((10, 128), "float32"), b1: Tensor((10,), "float32")):
    return relu(x @ w0.T + b0) @ w1.T + b1
