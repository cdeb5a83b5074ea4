def f(a: Tensor(("m", 512), "float16"), b: Tensor((512, 512), "float16"), bias: Tensor((512,), "float16")):
    return relu(a @ b + bias)
