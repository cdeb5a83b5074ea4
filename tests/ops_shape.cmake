# The shape ops (reshape, transpose, expand_dims, squeeze, broadcast_to,
# concat, x[...]) end to end against C references of their index maps.
mt_test(test_ops_shape SOURCES ${PROJECT_SOURCE_DIR}/tests/ops/test_ops_shape.c LIBRARY)
mt_test_gpu_emulated(test_ops_shape)
