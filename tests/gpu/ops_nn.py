# softmax and log_softmax over either axis, layer_norm.
def f(x: Tensor(("n", 100), "float32"), g: Tensor((100,), "float32"), b: Tensor((100,), "float32")):
    return softmax(x), log_softmax(x, axis=0), layer_norm(x, g, b, eps=1e-3), softmax(x * 2.0, axis=0)
