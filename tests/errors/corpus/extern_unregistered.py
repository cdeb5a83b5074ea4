# expect: MT_ERR_NAME 3:28 no host function 'my_norm' is registered on the context; register it with mt_context_register_extern
def f(x: Tensor((4,), "float32")):
    return call_dps_packed("my_norm", (x,), out_sinfo=Tensor((4,), "float32"))
