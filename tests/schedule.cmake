# Schedule rules, through the public API: numerics of the scheduled kernels
# and the structure of their loop IR (tests/schedule/).
mt_test(test_matmul_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matmul_schedule.c LIBRARY)
mt_test(test_rule_reduce SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_rule_reduce.c LIBRARY)
mt_test(test_matvec_schedule SOURCES ${PROJECT_SOURCE_DIR}/tests/schedule/test_matvec_schedule.c LIBRARY)
