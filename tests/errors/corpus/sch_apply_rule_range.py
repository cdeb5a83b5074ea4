# expect: MT_ERR_INVALID_ARG 7:39 apply_rule: knob 'nv' of rule schedule_matmul: 9 is not in 1..4
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_matmul", nv=9)
