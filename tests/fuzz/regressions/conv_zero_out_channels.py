# fuzz_graph (2026-11-28): conv2d with no output channels (a weight of
# shape (0, 3, 3, 3)) divided by zero in the CPU conv rule's row tiles
# (src/schedule/rule_conv.c, gen_rows: a tile of min(mr, og) = 0 rows).
# The rule now leaves such a conv (and an empty window or output) alone.
def f(x: Tensor((1, 3, 8, 8), "float32"), w: Tensor((0, 3, 3, 3), "float32"),
      v: Tensor((0, 3, 1, 1), "float32"), b: Tensor((0, 3, 8, 8), "float32")):
    return conv2d(x, w, padding=-0), conv2d(x, v), conv2d(b, w, padding=1)
