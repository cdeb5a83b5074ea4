# One loop function called twice in a row: fuse_tir put both calls' bodies
# into one function with the same loop variable 'i' bound twice, and the
# schedule rule stopped: "2 loops over 'i' in fused_scale_scale" (an
# internal error; found by fuzz_graph).
@T.prim_func
def scale(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)

def main(x: Tensor((64,), "float32")):
    a = scale(x)
    b = scale(a)
    return a, b
