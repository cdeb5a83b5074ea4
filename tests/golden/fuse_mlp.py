# passes: fuse_tir
# A matmul keeps its elementwise consumers as its epilogue (add, relu) and
# takes an injective producer (transpose, a cast) as its prologue; a matmul
# never joins another matmul's group; a producer that is also returned (vt)
# stays its own kernel.
def f(x: Tensor((2, 6), "float32"), w0: Tensor((4, 6), "float32"), b0: Tensor((4,), "float32"),
      w1: Tensor((3, 4), "float32"), b1: Tensor((3,), "float32"), w2: Tensor((3, 4), "float16"),
      v: Tensor((5, 6), "float32")):
    h = relu(x @ w0.T + b0)
    y = h @ w1.T + b1
    z = relu(y) @ w2.astype("float32")
    vt = v.T
    return y, z, vt, x @ vt
