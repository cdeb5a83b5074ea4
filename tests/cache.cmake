# The context's compile cache and the compile-time report: mt_jit_compile of a
# source already compiled, mt_kernel_compile_times, mtc --time-passes.
mt_test(test_cache SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_cache.c LIBRARY)
add_test(NAME mtc_time_passes
         COMMAND $<TARGET_FILE:mtc> --time-passes ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_time_passes PROPERTIES PASS_REGULAR_EXPRESSION
  "frontend.*graph passes.*TIR passes.*LLVM IR generation.*LLVM optimization.*JIT code generation.*compile total")
add_test(NAME mtc_time_passes_warm
         COMMAND $<TARGET_FILE:mtc> --warm 3 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_time_passes_warm PROPERTIES PASS_REGULAR_EXPRESSION
  "the first in this process.*compile total.*warm compile \\(median of 3, cache off\\).*LLVM optimization.*JIT code generation.*compile total.*warm wall, min \\.\\. max.*cached compile \\(same context\\) +[0-9.]+ us")
add_test(NAME mtc_warm_usage COMMAND $<TARGET_FILE:mtc> --warm 0 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_warm_usage PROPERTIES WILL_FAIL TRUE)
# --arch without --target cuda is a usage error (exit 2), said in mtc's words
add_test(NAME mtc_arch_without_cuda
         COMMAND $<TARGET_FILE:mtc> --arch sm_90 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_arch_without_cuda PROPERTIES PASS_REGULAR_EXPRESSION "--arch is for --target cuda")
