# CPU performance, part 1: the runtime parallel-for and the code generated
# for parallel loops, schedule primitives and the default CPU rule, the
# memory pool, and parallel kernels end to end; the executor's run path.
mt_test(test_parallel SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_parallel.c
        ${PROJECT_SOURCE_DIR}/src/passes/tir/split_host_device.c LAYERS mt_support mt_tir mt_codegen)
mt_test(test_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_schedule.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives.c
        ${PROJECT_SOURCE_DIR}/src/schedule/default_cpu.c
        ${PROJECT_SOURCE_DIR}/src/schedule/knobs.c
        ${PROJECT_SOURCE_DIR}/src/schedule/rule_colreduce.c
        ${PROJECT_SOURCE_DIR}/src/schedule/rule_fullreduce.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_rfactor.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_reduction.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_block.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_at.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_cache.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_trace.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_fma.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_layout.c
        ${PROJECT_SOURCE_DIR}/src/schedule/primitives_race.c
        ${PROJECT_SOURCE_DIR}/src/schedule/block_util.c
        ${MT_TIR_PASS_SOURCES}
        LAYERS mt_support mt_tir mt_codegen)
mt_test(test_pool SOURCES ${PROJECT_SOURCE_DIR}/tests/tools/test_pool.c
        ${PROJECT_SOURCE_DIR}/src/runtime/pool.c ${PROJECT_SOURCE_DIR}/src/runtime/tensor.c
        LAYERS mt_support)
mt_test(test_parallel_e2e SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_parallel_e2e.c LIBRARY)
mt_test(test_thread_pool SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_thread_pool.c LIBRARY)
# mtc --threads sets the context's thread count; a bad count is a usage error.
add_test(NAME mtc_threads
         COMMAND $<TARGET_FILE:mtc> --threads 2 --random --bench 3 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_threads PROPERTIES PASS_REGULAR_EXPRESSION "median .* over 3 runs")
add_test(NAME mtc_threads_bad
         COMMAND $<TARGET_FILE:mtc> --threads 0 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_threads_bad PROPERTIES PASS_REGULAR_EXPRESSION "--threads wants a number of threads from 1 to 256")
mt_test(test_run_path SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_run_path.c LIBRARY)
# A host that uses OpenMP itself (not under TSan: libgomp is not instrumented).
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND AND NOT MT_TSAN)
  mt_test(test_host_openmp SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_host_openmp.c LIBRARY)
  target_link_libraries(test_host_openmp PRIVATE OpenMP::OpenMP_C)
endif()
# The pool when pthread_create fails (wrapped at link time: no hook in the
# library) and after fork().
mt_test(test_pool_faults SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_pool_faults.c
        ${PROJECT_SOURCE_DIR}/src/runtime/parallel.c)
target_link_options(test_pool_faults PRIVATE -Wl,--wrap=pthread_create)
