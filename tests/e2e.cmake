# End-to-end tests through the public API (the whole library).
mt_test(test_numerics SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_numerics.c LIBRARY)
# ... and again with target cuda, emulated (tests/test_util.h, MT_TEST_TARGET)
mt_test_gpu_emulated(test_numerics)
mt_test(test_api SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_api.c LIBRARY)
mt_test(test_errors SOURCES ${PROJECT_SOURCE_DIR}/tests/errors/test_errors.c LIBRARY)
mt_test(test_golden SOURCES ${PROJECT_SOURCE_DIR}/tests/golden/test_golden.c LIBRARY)
mt_test(test_language SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_language.c LIBRARY)
mt_test(test_memplan SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_memplan.c LIBRARY)
# Every allocation of a run failing in turn (malloc and friends wrapped at
# link time: no hook in the library).
mt_test(test_run_faults SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_run_faults.c LIBRARY)
target_link_options(test_run_faults PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
                    -Wl,--wrap=aligned_alloc)
mt_test(test_target SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_target.c LIBRARY)
mt_test(test_devices_e2e SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_devices.c LIBRARY)
# Target cuda under emulation against the CPU: random fused programs, device
# placement, wrong-device arguments, the GPU schedules' TIR.
mt_test(test_gpu_emulation SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_gpu_emulation.c LIBRARY)
# mtc --target cuda --emulate: the GPU schedule printed, and the run on the emulated GPU
add_test(NAME mtc_cuda_emulate
         COMMAND $<TARGET_FILE:mtc> --target cuda --emulate --random --emit tir-sched
                 ${PROJECT_SOURCE_DIR}/examples/kernels/fused_add.py)
set_tests_properties(mtc_cuda_emulate PROPERTIES PASS_REGULAR_EXPRESSION
  "\"schedule\": \"gpu_fallback\".*T.launch\\(\"fused_add_add_kernel0\".*thread=\"threadIdx.x\".*\\[\\[ *-?[0-9]")
# The CUDA C of whole programs (target cuda): golden text for the seed's add,
# a softmax, a layer_norm, a GEMV and a matmul + bias + relu
# (tests/golden/cuda), and every golden and tests/gpu program through NVRTC
# for sm_80 and sm_90 with no register spills (skipped without NVRTC).
mt_test(test_cuda_text SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_cuda_text.c LIBRARY)
# Host functions (mt_context_register_extern, call_dps_packed): registration,
# placed compile errors, runs against C references; emulated: on the device.
mt_test(test_extern SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_extern.c LIBRARY)
mt_test_gpu_emulated(test_extern)
# Bound parameters (mt_compile_options.params): the kernel keeps the values,
# computes what the unbound one does; every malformed binding refused.
mt_test(test_bound SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_bound.c LIBRARY)
mt_test_gpu_emulated(test_bound)
# Loop functions of the source (@T.prim_func) as the entry and called from
# graph functions (destination passing, R.call_tir), against C references.
mt_test(test_prim_func SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_prim_func.c LIBRARY)
mt_test_gpu_emulated(test_prim_func)
# Run-time bounds checks of hand-written loop functions (check_bounds): out-of-
# bounds loads and stores stop the kernel, guard words untouched.
mt_test(test_check_bounds SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_check_bounds.c LIBRARY)
# The example CNN (examples/kernels/cnn.py: conv-relu-pool twice, flatten,
# linear) run by mtc against NumPy (tests/e2e/cnn_numpy.py), on the CPU and
# the emulated GPU; only where /usr/bin/python3 (or python3) has NumPy.
find_program(MT_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MT_PYTHON3)
  find_program(MT_PYTHON3 python3)
endif()
if(MT_PYTHON3)
  execute_process(COMMAND ${MT_PYTHON3} -c "import numpy" RESULT_VARIABLE MT_NUMPY_RC OUTPUT_QUIET ERROR_QUIET)
  if(MT_NUMPY_RC EQUAL 0)
    add_test(NAME mtc_cnn_numpy COMMAND ${MT_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/e2e/cnn_numpy.py
             $<TARGET_FILE:mtc> ${PROJECT_SOURCE_DIR}/examples/kernels/cnn.py)
    add_test(NAME mtc_cnn_numpy_gpu_emulated COMMAND ${MT_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/e2e/cnn_numpy.py
             $<TARGET_FILE:mtc> ${PROJECT_SOURCE_DIR}/examples/kernels/cnn.py --target cuda --emulate)
  endif()
endif()
# bfloat16 end to end: conversions bit for bit against a reference from the
# definition (nearest even, once; NaN 0x7fff), numerics against double at
# sizes 1, 7, 1000 and 4097; again under target cuda, emulated.
mt_test(test_bfloat16 SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_bfloat16.c LIBRARY)
mt_test_gpu_emulated(test_bfloat16)
# A host program's comma locale (LC_NUMERIC de_DE): literals, the TIR, the
# CUDA C's constants and the tuning log the same as in the C locale.
mt_test(test_locale SOURCES ${PROJECT_SOURCE_DIR}/tests/e2e/test_locale.c LIBRARY)
