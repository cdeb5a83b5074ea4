# Split-K (gpu_matmul): grids of tiles that leave half the SMs idle take K
# in splits, each block a partial sum, and a second kernel adds them and
# applies the epilogue. 96 columns of 512 rows: 2 splits of 1000 (16 steps
# of 32, the last past K); 100 x 40 with K = 2050: 8 splits. Constant
# shapes, which the split needs; the operands are multiples of 1/8 in
# [-1, 1] (a prologue the kernels fuse), so every sum is exact in any
# order and the splits give the CPU's results; d carries
# scripts/gpu_check.sh's --dim n.
def f(x: Tensor((512, 1000), "float32"), w: Tensor((96, 1000), "float32"), b: Tensor((96,), "float32"),
      y: Tensor((100, 2050), "float32"), z: Tensor((2050, 40), "float32"), d: Tensor(("n",), "float32")):
    xq = floor(x * 8.0) * 0.125
    wq = floor(w * 8.0) * 0.125
    yq = floor(y * 8.0) * 0.125
    zq = floor(z * 8.0) * 0.125
    return relu(xq @ wq.T + b), yq @ zq, sum(d)
