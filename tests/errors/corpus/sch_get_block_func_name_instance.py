# expect: MT_ERR_INVALID_ARG 11:38 sch.get_block(): this schedule is for 'scale'
@T.prim_func
def scale(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)

@T.schedule(scale)
def s(sch):
    b = sch.get_block("B", func_name="scale_1")

def main(x: Tensor((64,), "float32"), y: Tensor((48,), "float32")):
    a = scale(x)
    b = scale(y)
    return a, b
