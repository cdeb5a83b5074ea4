def f(x: Tensor((1, 784), "float32"), w: Tensor((128, 784), "float32")):
    return x @ w.T
