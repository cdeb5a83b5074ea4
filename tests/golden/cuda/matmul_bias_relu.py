def f(a: Tensor(("m", 256), "float32"), b: Tensor((256, 128), "float32"), bias: Tensor((128,), "float32")):
    return relu(a @ b + bias)
