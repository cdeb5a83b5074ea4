# Shape ops: reshape, flatten, transpose, expand_dims, squeeze,
# broadcast_to, concat, slicing.
def f(x: Tensor(("n", 6, 4), "float32"), y: Tensor((1, 6, 1), "float32")):
    a = reshape(x, (x.shape[0], -1))
    b = transpose(x, (2, 0, 1))
    c = concat((x, broadcast_to(y, (x.shape[0], 6, 4))), axis=2)
    d = squeeze(expand_dims(x[:, 1:5:2, ::-1], 0), 0)
    return a * 2.0, b + 1.0, c, d, flatten(y, start_dim=0)
