# The support layer (src/support): the arena.
mt_test(test_arena SOURCES ${PROJECT_SOURCE_DIR}/tests/support/test_arena.c LAYERS mt_support)
