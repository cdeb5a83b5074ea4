# A two-layer perceptron on a batch of flattened 28x28 images (the MLC
# course's model): each matmul keeps its bias and activation in one kernel.
def mlp(x: Tensor(("batch", 784), "float32"), w0: Tensor((784, 128), "float32"),
        b0: Tensor((128,), "float32"), w1: Tensor((128, 10), "float32"),
        b1: Tensor((10,), "float32")):
    h = relu(x @ w0 + b0)
    return softmax(h @ w1 + b1, axis=-1)
