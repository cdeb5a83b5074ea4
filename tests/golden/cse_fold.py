# passes: build cse dead_code fuse_tir inline_producers
def f(x: Tensor((4, 8), "float32"), flag: bool):
    a = exp(x) + exp(x)
    k = 2 * 3 - 1
    b = a * k + sigmoid(x) * sigmoid(x)
    # chains: once the two sigmoids are one, the two adds are equal too
    b = b + (sigmoid(x) + 1) * (sigmoid(x) + 1)
    if x.shape[1] > 4:
        c = b
    else:
        c = b + 1
    return c
