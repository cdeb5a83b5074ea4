# expect: MT_ERR_LIMIT 3:13 calls nest more than 32 deep (recursion is not supported)
def g(x: Tensor((2, 3), "float32")):
    return g(x)

def f(a: Tensor((2, 3), "float32")):
    return g(a)
