# The elementwise math op library (graph/ops_math.def): by name, and through
# the operators that reach the rest (// % ** comparisons not, if-else, astype).
mt_test(test_ops_math SOURCES ${PROJECT_SOURCE_DIR}/tests/ops/test_ops_math.c LIBRARY)
mt_test_gpu_emulated(test_ops_math)
mt_test(test_ops_math_operators SOURCES ${PROJECT_SOURCE_DIR}/tests/ops/test_ops_math_operators.c LIBRARY)
mt_test_gpu_emulated(test_ops_math_operators)
