# expect: MT_ERR_INVALID_ARG 9:9 vectorize: block 'sum' reduces over loop 'i1' with its init inside: decompose_reduction first
def main(x: Tensor((37, 64), "float32")):
    return sum(x, axis=-1)

@T.schedule("sum")
def s(sch):
    b = sch.get_block("sum")
    i, j = sch.get_loops(b)
    sch.vectorize(j)
