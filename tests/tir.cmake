# Loop IR (src/tir) and TIR passes (src/passes/tir).
#
# The pass sources are listed here rather than linked through the mt_passes
# layer: that layer also holds the graph passes and the schedule, which need
# the graph layer, and a pass test should build with the loop IR alone.
set(MT_TIR_PASS_SOURCES
  ${PROJECT_SOURCE_DIR}/src/passes/tir/tir_passes.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/inline_producers.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/inline_subst.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/lower_blocks.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/flatten_buffers.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/simplify.c
  ${PROJECT_SOURCE_DIR}/src/passes/tir/remove_unit_loops.c)

mt_test(test_tir_printer SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_printer.c
        LAYERS mt_support mt_tir)
mt_test(test_tir_visitor SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_visitor.c
        LAYERS mt_support mt_tir)
mt_test(test_tir_passes SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_passes.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
mt_test(test_tir_simplify SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_simplify.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
