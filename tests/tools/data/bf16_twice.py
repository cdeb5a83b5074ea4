def f(x: Tensor(("n",), "bfloat16")):
    return x * 2
