# The context's compile cache and the compile-time report: mt_jit_compile of a
# source already compiled, mt_kernel_compile_times, mtc --time-passes.
mt_test(test_cache SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_cache.c LIBRARY)
add_test(NAME mtc_time_passes
         COMMAND $<TARGET_FILE:mtc> --time-passes ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_time_passes PROPERTIES PASS_REGULAR_EXPRESSION
  "frontend.*graph passes.*TIR passes.*LLVM IR generation.*LLVM optimization.*JIT code generation.*compile total")
