# expect: MT_ERR_SHAPE 8:46 index 'i0 * 16 + i1 + 100' ranges over [100, 164), out of bounds for dim 0 of 'A' (size 60)
# A loop clamped to a tail only over-approximates its range; an index
# wholly outside the dim is still provably out of bounds.
@T.prim_func
def f(A: T.Buffer((60,), "float32"), B: T.Buffer((60,), "float32")):
    for i0 in range(4):
        for i1 in range(T.min(16, 60 - i0 * 16)):
            B[i0 * 16 + i1] = A[i0 * 16 + i1 + 100]
