# passes: build legalize fuse_tir inline_producers flatten_buffers simplify
def f(a: Tensor((4, 1, 3), "float32"), b: Tensor((5, 1), "float32"), c: Tensor((3,), "float32")):
    out = a * b + c
    return out
