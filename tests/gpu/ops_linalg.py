# matmul (plain, batched, transposed operands), linear with a bias.
def f(x: Tensor(("n", 48), "float32"), w: Tensor((40, 48), "float32"), b: Tensor((40,), "float32"), p: Tensor((3, "n", 24), "float32"), q: Tensor((3, 24, 17), "float32")):
    return linear(x, w, b), relu(x @ w.T), p @ q, p[0].T @ x
