# expect: MT_ERR_TYPE 7:19 sch.apply_rule() takes the rule's name, then its knobs by keyword (sch.apply_rule("schedule_matmul", mr=4))
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule(mr=4)
