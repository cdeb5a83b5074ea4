# A loop function (@T.prim_func) called from a graph function: the
# trailing output buffer is left out of the call (destination passing).
@T.prim_func
def custom_add(x: T.Buffer((2, 3), "float32"), y: T.Buffer((2, 3), "float32"),
               out: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 3):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = x[vi, vj] + y[vi, vj]

def main(a: Tensor((2, 3), "float32"), b: Tensor((2, 3), "float32")):
    s = a + b
    return custom_add(a, s)
