# expect: MT_ERR_SYNTAX 7:45 keyword argument repeated: 'mr'
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_matmul", mr=4, mr=6)
