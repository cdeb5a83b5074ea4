# A reduction to one value, split across threads (rfactor): 131072 partial
# sums of 128 elements, 8192 of 16 of those, then 512 on one thread.
def f(a: Tensor((4096, 4096), "float32")):
    return sum(a)
