# expect: MT_ERR_INVALID_ARG 7:20 apply_rule: no rule named 'schedule_gemm' (the rules with knobs: schedule_matmul, schedule_reduce, schedule_conv, schedule, gpu_matmul, gpu_gemv, gpu_reduce_rows, gpu_argreduce_rows)
def mm(a: Tensor((64, 32), "float32"), b: Tensor((32, 48), "float32")):
    return a @ b

@T.schedule("matmul")
def s(sch):
    sch.apply_rule("schedule_gemm")
