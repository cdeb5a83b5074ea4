# Loop IR (src/tir) and TIR passes (src/passes/tir); the verifier and source
# places (test_tir_verify: the whole library, for the pipeline).
#
# MT_TIR_PASS_SOURCES (tests/CMakeLists.txt): the pass sources, compiled into
# the tests rather than linked through the mt_passes layer.

mt_test(test_tir_printer SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_printer.c
        LAYERS mt_support mt_tir)
mt_test(test_tir_visitor SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_visitor.c
        LAYERS mt_support mt_tir)
# the whole library: the test finds passes in the registry (passes/registry.c)
mt_test(test_tir_passes SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_passes.c LIBRARY)
mt_test(test_tir_simplify SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_simplify.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
mt_test(test_tir_cse SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_cse.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
mt_test(test_tir_vectorize SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_vectorize.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
mt_test(test_tir_verify SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_verify.c LIBRARY)
mt_test(test_split_host_device SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_split_host_device.c
        ${MT_TIR_PASS_SOURCES} LAYERS mt_support mt_tir)
# Every TIR dump (stages tir and tir-sched, CPU and emulated cuda) of the
# golden, example and GPU test programs parses back (tir/from_ast.c) and
# prints the same text.
mt_test(test_tir_roundtrip SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_roundtrip.c LIBRARY STATIC)
# T.shfl_xor: printed, parsed, the verifier's rule and its refusals, the emulation's split.
mt_test(test_tir_shuffle SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_shuffle.c LIBRARY STATIC)
# T.wmma_*: printed, parsed, the verifier's rules and refusals, the emulation, the CUDA C.
mt_test(test_tir_wmma SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_wmma.c LIBRARY STATIC)
# transpose_tiles: the tiles it rewrites (and verifies), those it leaves, the kernels' values.
mt_test(test_tir_transpose SOURCES ${PROJECT_SOURCE_DIR}/tests/tir/test_tir_transpose.c LIBRARY STATIC)
