# The MLC course's small CNN on one 28x28 image: two conv-relu-maxpool
# stages, flatten, a linear layer to 10 classes. Each conv keeps its bias
# and relu in one kernel (mtc --emit graph-opt shows fused_conv2d_add_relu).
def cnn(x: Tensor((1, 1, 28, 28), "float32"),
        w1: Tensor((8, 1, 3, 3), "float32"), b1: Tensor((8, 1, 1), "float32"),
        w2: Tensor((16, 8, 3, 3), "float32"), b2: Tensor((16, 1, 1), "float32"),
        w3: Tensor((10, 400), "float32"), b3: Tensor((10,), "float32")):
    h = max_pool2d(relu(conv2d(x, w1) + b1), 2)     # (1, 8, 13, 13)
    h = max_pool2d(relu(conv2d(h, w2) + b2), 2)     # (1, 16, 5, 5)
    return linear(flatten(h), w3, b3)               # (1, 10)
