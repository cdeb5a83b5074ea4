# passes: build legalize inline_producers simplify
def f(a: Tensor((3,), "int32"), b: Tensor((3,), "int32")):
    q = a / b
    r = -a * 3 + b
    return q, r
