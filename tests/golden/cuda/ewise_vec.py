# A large elementwise chain: each thread loads a float4 of a and of b and
# stores one of the result where the addresses are 16-byte aligned
# (mt_load_float4 / mt_store_float4), element by element where not.
def f(a: Tensor((4096, 4096), "float32"), b: Tensor((4096, 4096), "float32")):
    return exp(a) * b + 1.0
