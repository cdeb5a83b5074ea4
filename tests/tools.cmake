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

# --emit dot parses as Graphviz (dot renders it; scripts/test.sh installs
# graphviz) for the examples and a program with if/for/assert
foreach(k fused_add const_add add)
  add_test(NAME mtc_emit_dot_${k} COMMAND bash -c
    "set -o pipefail; \"$1\" --emit dot \"$2\" | dot -Tsvg -o /dev/null"
    mtc_dot $<TARGET_FILE:mtc> ${PROJECT_SOURCE_DIR}/examples/kernels/${k}.py)
endforeach()
add_test(NAME mtc_emit_dot_control_flow COMMAND bash -c
  "set -o pipefail; \"$1\" --emit dot \"$2\" | dot -Tsvg -o /dev/null"
  mtc_dot $<TARGET_FILE:mtc> ${PROJECT_SOURCE_DIR}/tests/golden/control_flow.py)
add_test(NAME mtc_dump_after COMMAND $<TARGET_FILE:mtc> --dump-after simplify,fuse_ops
         ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_dump_after PROPERTIES PASS_REGULAR_EXPRESSION
  ";; ---- after fuse_ops ----\n.*;; ---- after simplify#1 ----\n.*;; ---- after simplify#2 ----\n")
# --param binds a parameter to a .npy file's data at compile time
add_test(NAME mtc_param COMMAND $<TARGET_FILE:mtc> --param w=tests/tools/data/w.npy
         --param b=tests/tools/data/b.npy --input x=tests/tools/data/x.npy tests/tools/data/lin.py
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(mtc_param PROPERTIES PASS_REGULAR_EXPRESSION "^\\[\\[ 0\\. 13\\.\\]\n \\[ 8\\. 25\\.\\]\\]\n$")
add_test(NAME mtc_param_mismatch COMMAND $<TARGET_FILE:mtc> --param b=tests/tools/data/w.npy
         --input x=tests/tools/data/x.npy tests/tools/data/lin.py WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(mtc_param_mismatch PROPERTIES PASS_REGULAR_EXPRESSION
  "lin.py:1:72: error: parameter 'b' is float32 \\(2,\\) but the value bound to it is float32 \\(3, 2\\)")
# mtc with a loop function as the entry (--entry NAME): its output buffer
# is the result.
add_test(NAME mtc_prim_func_entry
         COMMAND $<TARGET_FILE:mtc> --entry custom_add --random --emit graph
                 ${PROJECT_SOURCE_DIR}/examples/kernels/custom_add.py)
set_tests_properties(mtc_prim_func_entry PROPERTIES PASS_REGULAR_EXPRESSION
  "def custom_add\\(x: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\), y: R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\):.*R.call_tir\\(cls.custom_add, \\(x, y\\), out_sinfo=R.Tensor\\(\\(2, 3\\), dtype=\"float32\"\\)\\).*\\[\\[ *-?[0-9]")
# bfloat16 .npy files ('<V2', what np.save writes for ml_dtypes.bfloat16):
# read, computed on, written, read back and printed (x * 2 twice: 0.1 is
# bfloat16's 0.10009765625, 3e38 * 4 overflows to inf)
add_test(NAME mtc_bfloat16_npy COMMAND bash -c
  "\"$1\" --input x=\"$2/xbf16.npy\" --output mtc_bf16_out.npy \"$2/bf16_twice.py\" && \"$1\" --input x=mtc_bf16_out.npy \"$2/bf16_twice.py\""
  mtc_bf16 $<TARGET_FILE:mtc> ${PROJECT_SOURCE_DIR}/tests/tools/data WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(mtc_bfloat16_npy PROPERTIES
  PASS_REGULAR_EXPRESSION "^\\[ 4\\.     -6\\.      0\\.4        inf  0\\.0312\\]\n$")
