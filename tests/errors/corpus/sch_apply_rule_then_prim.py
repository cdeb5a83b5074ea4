# expect: MT_ERR_INVALID_ARG 8:13 get_block: rule schedule_matmul has scheduled the kernel already (apply_rule is its schedule's last step)
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_matmul", mr=4)
    b = sch.get_block("matmul")
