# expect: MT_ERR_TYPE 9:16 'acc' stores into 'x', so it is an output: leave it out of the call (tensors are immutable)
@T.prim_func
def acc(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        x[i] = x[i] + 1.0
        y[i] = x[i]

def main(a: Tensor((4,), "float32")):
    return acc(a)
