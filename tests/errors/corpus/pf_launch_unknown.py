# expect: MT_ERR_NAME 4:14 T.launch of 'nope': no loop function of that name
@T.prim_func
def f(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    T.launch("nope", x, grid=(1,))
    y[0] = 1.0
