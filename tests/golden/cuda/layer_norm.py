def f(x: Tensor(("n", 768), "float32"), g: Tensor((768,), "float32"), b: Tensor((768,), "float32")):
    return layer_norm(x, g, b)
