# fuzz finding: 80 fused negations made a 700-byte function name; the JIT
# looked it up through a 512-byte buffer and reported an internal error.
def f(a: Tensor((3, 3), "float32")):
    out = matmul(a, a)
    return -------------------------------------------------------------------------------- out
