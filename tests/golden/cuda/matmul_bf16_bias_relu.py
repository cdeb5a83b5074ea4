def f(a: Tensor(("m", 512), "bfloat16"), b: Tensor((512, 512), "bfloat16"), bias: Tensor((512,), "bfloat16")):
    return relu(a @ b + bias)
