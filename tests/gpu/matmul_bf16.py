def f(x: Tensor(("n", 200), "bfloat16"), w: Tensor((200, 130), "bfloat16"), b: Tensor((130,), "bfloat16"), w2: Tensor((70, 200), "bfloat16")):
    return relu(x @ w + b), x @ w2.T
