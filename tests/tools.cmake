# The tools: tensors (src/runtime/tensor.c) and the .npy reader/writer that
# mtc uses (tools/npy.c). Neither needs the compiler.
mt_test(test_tensor SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_tensor.c
        ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c LAYERS mt_support)
mt_test(test_npy SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_npy.c
        ${PROJECT_SOURCE_DIR}/tools/npy.c ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c
        LAYERS mt_support)
# mtc with a loop function as the entry (--entry NAME): its output buffer
# is the result.
add_test(NAME mtc_prim_func_entry
         COMMAND $<TARGET_FILE:mtc> --entry custom_add --random --emit graph
                 ${PROJECT_SOURCE_DIR}/examples/kernels/custom_add.py)
set_tests_properties(mtc_prim_func_entry PROPERTIES PASS_REGULAR_EXPRESSION
  "def custom_add\\(x: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\), y: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\):.*R.call_tir\\(cls.custom_add, \\(x, y\\), out_sinfo=R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\).*\\[\\[ *-?[0-9]")
