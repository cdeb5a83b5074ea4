# passes: parse build legalize fuse_ops fuse_tir dead_code inline_producers lower_blocks flatten_buffers simplify
def add(a: Tensor((2, 3), "float32"), b: Tensor((2, 3), "float32")):
    out = a + b
    out = out + a
    return out
