# Reductions, matmul, softmax, log_softmax, layer_norm: numerics through the
# public API against C references (tests/ops/test_ops_nn.c).
mt_test(test_ops_nn SOURCES ${PROJECT_SOURCE_DIR}/tests/ops/test_ops_nn.c LIBRARY)
mt_test_gpu_emulated(test_ops_nn)

# conv2d, the pools and flatten (tests/ops/test_ops_conv.c).
mt_test(test_ops_conv SOURCES ${PROJECT_SOURCE_DIR}/tests/ops/test_ops_conv.c LIBRARY)
mt_test_gpu_emulated(test_ops_conv)
