# Accuracy of the inline float32 math (exp, log, tanh, sigmoid, erf;
# src/codegen/llvm_math.c) through the public API against double libm, and
# the vectorized, call-free code it becomes.
mt_test(test_vmath SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_vmath.c LIBRARY)
