# expect: MT_ERR_SHAPE 3:13 cannot broadcast shapes (n,) and (m,) in 'subtract' (operands 'a' and 'b')
def f(a: Tensor(("n",), "float32"), b: Tensor(("m",), "float32")):
    out = a - b
    return out
