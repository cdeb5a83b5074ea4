def f(x: Tensor(("n", 1000), "float32")):
    return softmax(x, axis=-1), log_softmax(x, axis=-1)
