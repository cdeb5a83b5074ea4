def f(x: Tensor(("n", 4097), "float32"), g: Tensor((4097,), "float32"), b: Tensor((4097,), "float32")):
    return layer_norm(x, g, b)
