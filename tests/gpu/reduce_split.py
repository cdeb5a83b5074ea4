# Reductions with few outputs (gpu_fallback splits them across threads:
# partial results through rfactor) and a large elementwise nest (a float4
# per thread): constant shapes, which the split and the vectors need; d
# carries scripts/gpu_check.sh's --dim n.
def f(a: Tensor((2048, 1000), "float32"), b: Tensor((2048, 1000), "float32"), d: Tensor(("n",), "float32")):
    c = a * b + a
    return sum(c), max(a, axis=0), mean(a, axis=1), c, sum(d)
