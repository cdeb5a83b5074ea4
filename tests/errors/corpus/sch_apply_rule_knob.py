# expect: MT_ERR_INVALID_ARG 7:39 apply_rule: rule schedule_matmul has no knob 'mx'
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_matmul", mx=4)
