# Schedule rules, through the public API: numerics of the scheduled kernels
# and the structure of their loop IR (tests/schedule/).
mt_test(test_matmul_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matmul_schedule.c LIBRARY)
# ... and the GPU's (gpu_matmul.c), emulated
mt_test_gpu_emulated(test_matmul_schedule)
mt_test(test_rule_reduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_rule_reduce.c LIBRARY)
# argmax / argmin over the last axis (rule_argreduce.c; emulated: gpu_argreduce.c)
mt_test(test_argreduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_argreduce.c LIBRARY)
mt_test_gpu_emulated(test_argreduce)
mt_test(test_matvec_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matvec_schedule.c LIBRARY)
mt_test(test_gemv_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_gemv_schedule.c LIBRARY)
# The matmul rule's packed schedule as primitives (rule_matmul_prims.c)
mt_test(test_matmul_prims SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matmul_prims.c LIBRARY)
# The block schedule primitives (compute_inline, compute_at, cache_write,
# decompose_reduction) on the loop functions of compiled kernels.
mt_test(test_primitives_block SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_primitives_block.c LIBRARY)
# Reductions over outer axes (rule_colreduce.c); also under the GPU schedules
mt_test(test_colreduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_colreduce.c LIBRARY)
mt_test_gpu_emulated(test_colreduce)
# The GPU matmul rules (gpu_gemv.c, gpu_matmul.c), target cuda: emulated
# unless MT_TEST_TARGET=cuda
mt_test(test_gpu_matmul SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_gpu_matmul.c LIBRARY)
# Reductions over every axis or several with the last (rule_fullreduce.c, the
# rfactor primitive); also under the GPU schedules
mt_test(test_fullreduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_fullreduce.c LIBRARY)
mt_test_gpu_emulated(test_fullreduce)
# User schedules: @T.schedule in the source, the C API's compile callback,
# the "schedule" dump (schedule/sched_from_ast.c, user_sched.c, user_apply.c)
mt_test(test_user_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_user_schedule.c LIBRARY)
mt_test_gpu_emulated(test_user_schedule)
# sch.transform_layout: a buffer's layout from an index map (primitives_layout.c)
mt_test(test_transform_layout SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_transform_layout.c LIBRARY)
mt_test_gpu_emulated(test_transform_layout)
# Which default rule schedules each kernel, over symbolic dims and epilogues
mt_test(test_rule_choice SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_rule_choice.c LIBRARY)
# sch.apply_rule: the lowered-form rules' choices as knobs, printed, replayed, edited
mt_test(test_apply_rule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_apply_rule.c LIBRARY)
# reverse_compute_inline, reverse_compute_at, cache_read and cache_write
# with a copy block, on the same kernels (blk_test.h)
mt_test(test_primitives_reverse SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_primitives_reverse.c LIBRARY)
# Knobs, tuning logs and mt_tune (docs/schedule.md, "Tuning"). Static: it
# uses the knob tables and the log reader, which the shared library hides.
mt_test(test_tune SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_tune.c LIBRARY STATIC)
# mtc --tune / --tuning-log (docs/mtc.md)
set(MT_MTC_TUNE_LOG ${CMAKE_CURRENT_BINARY_DIR}/mtc-tune.jsonl)
add_test(NAME mtc_tune
         COMMAND sh -c "rm -f '${MT_MTC_TUNE_LOG}' && \
'$<TARGET_FILE:mtc>' --tune 4 --tune-seconds 20 --tuning-log '${MT_MTC_TUNE_LOG}' '${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py' && \
'$<TARGET_FILE:mtc>' --tuning-log '${MT_MTC_TUNE_LOG}' --random --bench 3 '${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py'; \
rc=$?; rm -f '${MT_MTC_TUNE_LOG}'; exit $rc")
set_tests_properties(mtc_tune PROPERTIES PASS_REGULAR_EXPRESSION
  "tuned softmax \\(schedule_reduce\\): default [0-9.]+ ms, tuned [0-9.]+ ms \\([0-9.]+x\\), [0-9]+ trials, knobs: .*median .* over 3 runs")
add_test(NAME mtc_tune_needs_log
         COMMAND $<TARGET_FILE:mtc> --tune 4 ${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py)
set_tests_properties(mtc_tune_needs_log PROPERTIES PASS_REGULAR_EXPRESSION
  "mtc: --tune needs --tuning-log FILE to write to\nTry 'mtc --help'")
add_test(NAME mtc_tune_bad_trials
         COMMAND $<TARGET_FILE:mtc> --tune 0 --tuning-log x.jsonl ${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py)
set_tests_properties(mtc_tune_bad_trials PROPERTIES PASS_REGULAR_EXPRESSION "--tune wants a number of trials")
add_test(NAME mtc_tuning_log_missing
         COMMAND $<TARGET_FILE:mtc> --tuning-log /nonexistent/t.jsonl ${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py)
set_tests_properties(mtc_tuning_log_missing PROPERTIES PASS_REGULAR_EXPRESSION
  "/nonexistent/t.jsonl: error: cannot read tuning log")
add_test(NAME mtc_tune_cuda
         COMMAND $<TARGET_FILE:mtc> --target cuda --emulate --tune 4 --tuning-log x.jsonl ${PROJECT_SOURCE_DIR}/examples/kernels/tune_softmax.py)
set_tests_properties(mtc_tune_cuda PROPERTIES PASS_REGULAR_EXPRESSION "the emulation's timings say nothing about a GPU")
# Exercise 2 (examples/tune.c): tune, then the tuned kernel against the default
set(MT_EXAMPLE_TUNE_LOG ${CMAKE_CURRENT_BINARY_DIR}/example-tune.jsonl)
add_test(NAME example_tune
         COMMAND sh -c "rm -f '${MT_EXAMPLE_TUNE_LOG}'; '$<TARGET_FILE:example_tune>' 6 '${MT_EXAMPLE_TUNE_LOG}'; \
rc=$?; rm -f '${MT_EXAMPLE_TUNE_LOG}'; exit $rc")
set_tests_properties(example_tune PROPERTIES PASS_REGULAR_EXPRESSION
  "tuned softmax \\(schedule_reduce\\) in [0-9]+ trials: .*default [0-9.]+ ms, tuned [0-9.]+ ms")
