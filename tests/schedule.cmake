# Schedule rules, through the public API: numerics of the scheduled kernels
# and the structure of their loop IR (tests/schedule/).
mt_test(test_matmul_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matmul_schedule.c LIBRARY)
# ... and the GPU's (gpu_matmul.c), emulated
mt_test_gpu_emulated(test_matmul_schedule)
mt_test(test_rule_reduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_rule_reduce.c LIBRARY)
mt_test(test_matvec_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matvec_schedule.c LIBRARY)
mt_test(test_gemv_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_gemv_schedule.c LIBRARY)
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
# reverse_compute_inline, reverse_compute_at, cache_read and cache_write
# with a copy block, on the same kernels (blk_test.h)
mt_test(test_primitives_reverse SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_primitives_reverse.c LIBRARY)
