# Robustness: garbage to every public function, run-time argument errors,
# out-of-memory results, limits (tests/robust); one context shared by
# threads that compile, run and dump at once (tests/threads; scripts/test.sh
# also runs it under ThreadSanitizer).
mt_test(test_robust SOURCES ${PROJECT_SOURCE_DIR}/tests/robust/test_robust.c
        ${PROJECT_SOURCE_DIR}/tools/npy.c LIBRARY)
mt_test(test_threads SOURCES ${PROJECT_SOURCE_DIR}/tests/threads/test_threads.c LIBRARY)
