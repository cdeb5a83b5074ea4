def f(x: Tensor(("n", 1024), "float32")):
    return softmax(x, axis=-1)
