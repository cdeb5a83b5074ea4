# expect: MT_ERR_INVALID_ARG 13:9 compute_at: cannot derive the region of 'b_global' that loop 'i2_0' needs from index '(i2_0 * 16 + i2_1) // 16' of dim 0 (an index through // or %, as transform_layout leaves it: move the block first, then change the layout)
def mm(a: Tensor((12, 32), "float32"), b: Tensor((32, 32), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    blk = sch.get_block("matmul")
    i, k, j = sch.get_loops(blk)
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(j0, i, k, j1)
    pack = sch.cache_read(blk, 1, "global")
    sch.transform_layout(pack, "b_global", lambda k, j: (j // 16, k, j % 16))
    sch.compute_at(pack, j0)
