# expect: MT_ERR_TYPE 12:19 sch.get_loops(): its argument must be a block, not a lambda
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]

@T.schedule(f)
def s(sch):
    blk = lambda i: i
    sch.get_loops(blk)

# A lambda is a schedule's index map (transform_layout); given where a block
# is wanted, it is named in the refusal (it read past the names of values).
