# expect: MT_ERR_SHAPE 5:21 index 4 is out of bounds for dim 1 of 'x' (size 4)
@T.prim_func
def f(x: T.Buffer(("n", 4), "float32"), y: T.Buffer(("n",), "float32")):
    for i in range(n):
        y[i] = x[i, 4]
