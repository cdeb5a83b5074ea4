# expect: MT_ERR_UNSUPPORTED 3:37 scalar parameter 's' of loop function 'f': a called or entry loop function takes buffers only (a scalar is T.Buffer((), dtype))
@T.prim_func
def f(x: T.Buffer((4,), "float32"), s: T.float32, y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = x[i] * s

def main(a: Tensor((4,), "float32")):
    return f(a, a)
