# expect: MT_ERR_NAME 5:16 unknown name 'z'
@T.prim_func
def unused(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        y[i] = z[i]

def main(a: Tensor((4,), "float32")):
    return a * 2.0
