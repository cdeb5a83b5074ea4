# passes: build legalize inline_producers lower_blocks flatten_buffers remove_unit_loops simplify
def f(s: float32, x: Tensor((1, 8), "float32")):
    y = x * s - 2 * s
    return y
