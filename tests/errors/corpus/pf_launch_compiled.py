# expect: MT_ERR_UNSUPPORTED 10:13 T.launch in a compiled loop function: launches are made by the compiler (the tir-sched dump); compile the launched function itself
@T.prim_func
def body(begin: T.int64, end: T.int64, x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    T.func_attr({"kind": "parallel_body"})
    for i in range(begin, end):
        y[i] = x[i] * 2.0

@T.prim_func
def host(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    T.launch("body", x, y, grid=(8,))
