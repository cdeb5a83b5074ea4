# passes: fuse_tir
# conv2d keeps its bias and relu (one kernel, fused_conv2d_add_relu); the
# relu in front of a pool stays with the conv rather than joining the pool;
# a pool takes its injective consumer (flatten).
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((4, 3, 3, 3), "float32"), b: Tensor((4, 1, 1), "float32")):
    h = max_pool2d(relu(conv2d(x, w, padding=1) + b), 2)
    return flatten(h)
