# Creation: zeros, ones, full and their _like forms, in several dtypes.
def f(x: Tensor(("n", 7), "float32")):
    return (zeros((x.shape[0], 3)) + x[:, 0:3], ones((5,), dtype="int32") * 2, full((2, "n"), 1.5),
            zeros_like(x, dtype="int64"), ones_like(x) - x, full_like(x, 3.0) * x)
