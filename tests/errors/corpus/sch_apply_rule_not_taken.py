# expect: MT_ERR_INVALID_ARG 7:9 apply_rule: rule schedule_reduce does not take kernel 'matmul' as it is scheduled so far (the rule takes only what it would schedule by default)
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_reduce", lanes=8)
