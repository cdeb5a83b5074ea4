# expect: MT_ERR_TYPE 7:42 sch.apply_rule(): knob 'mr' must be an integer, not a string
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_matmul", mr="4")
