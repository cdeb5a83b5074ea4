# T.prefetch: in a hand-written loop function (the next row's element, past
# the buffer for the last row: a hint, never an access; CUDA C keeps only
# its index) and in the CPU row rule's last pass (layer_norm and softmax
# over rows of 1000 prefetch the next row's input).
@T.prim_func
def scale(x: T.Buffer(("n", 64), "float32"), y: T.Buffer(("n", 64), "float32")):
    for i, j in T.grid(n, 64):
        with T.block("s"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.prefetch(x[vi + 1, vj])
            y[vi, vj] = x[vi, vj] * 2.0

def f(x: Tensor(("n", 64), "float32"), a: Tensor(("n", 1000), "float32"), g: Tensor((1000,), "float32"),
      b: Tensor((1000,), "float32")):
    return scale(x), layer_norm(a, g, b), softmax(a, axis=-1)
