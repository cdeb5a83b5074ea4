# passes: fuse_tir inline_producers
def f(x: Tensor((4, 8), "float32"), a: Tensor((4, 3), "float32"), w: Tensor((3, 5), "float32"), c: Tensor((5,), "float32")):
    y = x - sum(x * x, axis=1, keepdims=True)
    z = relu(a @ w + c)
    return y, z
