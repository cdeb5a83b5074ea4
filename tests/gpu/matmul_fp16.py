def f(x: Tensor(("n", 200), "float16"), w: Tensor((200, 130), "float16"), b: Tensor((130,), "float16"), w2: Tensor((70, 200), "float16")):
    return relu(x @ w + b), x @ w2.T
