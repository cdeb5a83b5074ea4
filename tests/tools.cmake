# The tools: tensors (src/runtime/tensor.c) and the .npy reader/writer that
# mtc uses (tools/npy.c). Neither needs the compiler.
mt_test(test_tensor SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_tensor.c
        ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c LAYERS mt_support)
mt_test(test_npy SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_npy.c
        ${PROJECT_SOURCE_DIR}/tools/npy.c ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c
        LAYERS mt_support)
