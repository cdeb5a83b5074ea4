# The tools: tensors (src/runtime/tensor.c) and the .npy reader/writer that
# mtc uses (tools/npy.c). Neither needs the compiler.
mt_test(test_tensor SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_tensor.c
        ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c LAYERS mt_support)
mt_test(test_npy SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_npy.c
        ${PROJECT_SOURCE_DIR}/tools/npy.c ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c
        LAYERS mt_support)
# mtc's usage errors: the one line that matters and a hint, not the whole help
add_test(NAME mtc_usage_error COMMAND $<TARGET_FILE:mtc> --bogus x.py)
set_tests_properties(mtc_usage_error PROPERTIES
  PASS_REGULAR_EXPRESSION "^mtc: unknown option '--bogus'\nTry 'mtc --help' for more information.\n$"
  FAIL_REGULAR_EXPRESSION "usage:")
# a NUL byte in the source is placed at its line and column
add_test(NAME mtc_nul_byte COMMAND bash -c
  "printf 'def f(a: Tensor((4,), \"float32\")):\\n    return a\\000 + a\\n' > mtc_nul.py && \"$1\" mtc_nul.py"
  mtc_nul $<TARGET_FILE:mtc> WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(mtc_nul_byte PROPERTIES
  PASS_REGULAR_EXPRESSION "^mtc_nul.py:2:13: error: the source contains a NUL byte\n$")
# mtc with a loop function as the entry (--entry NAME): its output buffer
# is the result.
add_test(NAME mtc_prim_func_entry
         COMMAND $<TARGET_FILE:mtc> --entry custom_add --random --emit graph
                 ${PROJECT_SOURCE_DIR}/examples/kernels/custom_add.py)
set_tests_properties(mtc_prim_func_entry PROPERTIES PASS_REGULAR_EXPRESSION
  "def custom_add\\(x: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\), y: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\):.*R.call_tir\\(cls.custom_add, \\(x, y\\), out_sinfo=R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\).*\\[\\[ *-?[0-9]")
