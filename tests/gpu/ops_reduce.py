# Reductions over each axis, several axes and all of them, with keepdims;
# argmax / argmin; prod.
def f(x: Tensor(("n", 33, 5), "float32"), i: Tensor(("n", 33), "int32")):
    return (sum(x), mean(x, axis=0), max(x, axis=1), min(x, axis=(0, 2), keepdims=True),
            prod(x * 0.01 + 1.0, axis=-1), argmax(x, axis=1), argmin(x, axis=2, keepdims=True),
            sum(i, axis=0), max(i))
