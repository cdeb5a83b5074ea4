# expect: MT_ERR_NAME 5:13 'main' is not a loop function (@T.prim_func) of this source
def main(a: Tensor((64, 100), "float32"), b: Tensor((64, 100), "float32")):
    return a + b * 2.0

@T.schedule(main)
def s(sch):
    pass
