# Review (2026-11-28): a hand-written reduction whose trailing reduce axis
# has no elements, under an outer reduce axis and a spatial one (RSR),
# divided by zero in the CPU full-reduction rule's chunk size
# (src/schedule/rule_fullreduce.c: rows per chunk = bytes / (E * size) with
# E = 0; a SIGFPE in a release mtc). The rule now leaves such a nest alone.
@T.prim_func
def red(x: T.Buffer((4, 4096, 0), "float32"), out: T.Buffer((4096,), "float32")):
    for a, b, c in T.grid(4, 4096, 0):
        with T.block("s"):
            va, vb, vc = T.axis.remap("RSR", [a, b, c])
            with T.init():
                out[vb] = T.float32(0)
            out[vb] = out[vb] + x[va, vb, vc]
def main(x: Tensor((4, 4096, 0), "float32")):
    return red(x)
