# fuzz_graph (2026-11-28): a column reduction whose outer spatial axis has
# no elements (sum over axes 1 and 3 of a 1 x 0 x 3 x 3 x 4 tensor, the
# reduced axes between kept ones) divided by zero in the CPU column rule's
# chunk size (src/schedule/rule_colreduce.c, chunk_elems: cores per outer
# iteration).
def f(x: Tensor((1, 0, 3, 3, 4), "float32"), y: Tensor((0, 5, 2), "float32")):
    return sum(x, axis=(3, -3)), max(y, axis=1)
