# passes: build legalize fuse_tir inline_producers flatten_buffers simplify
def f(x: Tensor((2, 3, 4), "float32")):
    y = reshape(x, (6, 4))
    out = y * 2
    return out
