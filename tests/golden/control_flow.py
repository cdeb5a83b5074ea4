# passes: build legalize fuse_tir
def f(x: Tensor(("n",), "float32"), steps: int64, scale: float32):
    y = x
    if scale > 1.0:
        y = y * scale
    for i in range(steps):
        y = y + i
    assert y.shape[0] > 0, "empty input"
    return y
