# conv2d (stride, padding, dilation, groups) with bias and relu, the pools,
# flatten: the MLC course's CNN ops, NCHW.
def f(x: Tensor(("n", 4, 15, 13), "float32"), w: Tensor((8, 4, 3, 3), "float32"), wg: Tensor((8, 2, 3, 3), "float32"), b: Tensor((8, 1, 1), "float32")):
    h = relu(conv2d(x, w, padding=1) + b)
    g = conv2d(x, wg, stride=2, padding=(1, 2), dilation=2, groups=2)
    return (max_pool2d(h, 2), avg_pool2d(h, (3, 2), stride=2, padding=1),
            adaptive_avg_pool2d(g, (2, 3)), flatten(max_pool2d(g, 3, stride=1)))
