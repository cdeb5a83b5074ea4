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

# The disk cache (docs/api.md, "The disk cache"): hits in a fresh context,
# misses, damaged entries, writers at once, the bound, off, failures. Static:
# it also tests BLAKE2s, which the shared library does not export.
mt_test(test_disk_cache SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_disk_cache.c LIBRARY STATIC)
# The hit in a new process: mtc twice over a fresh directory, the first a
# miss that writes the entry, the second a hit (LLVM does not run); then
# with --no-disk-cache, and with MINITRITON_CACHE_DIR=off (the suite's
# setting), off.
set(MT_MTC_DISK_DIR ${CMAKE_CURRENT_BINARY_DIR}/mtc-disk-cache)
add_test(NAME mtc_disk_cache_new_process
         COMMAND sh -c "rm -rf '${MT_MTC_DISK_DIR}' && \
'$<TARGET_FILE:mtc>' --cache-dir '${MT_MTC_DISK_DIR}' --time-passes '${PROJECT_SOURCE_DIR}/examples/kernels/mlp.py' 2>&1 && \
'$<TARGET_FILE:mtc>' --cache-dir '${MT_MTC_DISK_DIR}' --time-passes --emit asm '${PROJECT_SOURCE_DIR}/examples/kernels/mlp.py' 2>&1 && \
'$<TARGET_FILE:mtc>' --cache-dir '${MT_MTC_DISK_DIR}' --no-disk-cache --time-passes '${PROJECT_SOURCE_DIR}/examples/kernels/mlp.py' 2>&1 && \
'$<TARGET_FILE:mtc>' --time-passes '${PROJECT_SOURCE_DIR}/examples/kernels/mlp.py' 2>&1; rc=$?; rm -rf '${MT_MTC_DISK_DIR}'; exit $rc")
set_tests_properties(mtc_disk_cache_new_process PROPERTIES PASS_REGULAR_EXPRESSION
  "disk cache +miss \\(compiled, entry written\\).*disk cache +hit \\(machine code read from disk.*\\.text.*disk cache +off.*disk cache +off")
