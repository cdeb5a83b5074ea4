# Code generation: hand-built lowered TIR through split_host_device, LLVM and
# the ORC JIT, run and compared with C references (src/codegen/; the tests
# compile the pass in: the codegen layer does not link the passes).
mt_test(test_codegen SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_codegen.c
        ${PROJECT_SOURCE_DIR}/src/passes/tir/split_host_device.c LAYERS mt_support mt_tir mt_codegen)
# Streaming (non-temporal) stores for outputs past the last-level cache
# (src/codegen/llvm_stream.c): which kernels get them, and layer_norm's
# numbers into aligned and unaligned outputs.
mt_test(test_stream SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_stream.c LIBRARY)
# The compile driver when its helper threads cannot start or one function's
# object emission fails (both wrapped at link time: no hook in the library).
mt_test(test_compile_faults SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_compile_faults.c
        ${PROJECT_SOURCE_DIR}/src/passes/tir/split_host_device.c LAYERS mt_support mt_tir mt_codegen)
target_link_options(test_compile_faults PRIVATE -Wl,--wrap=pthread_create
                    -Wl,--wrap=LLVMTargetMachineEmitToMemoryBuffer -Wl,--wrap=malloc)
# CUDA C to cubins with NVRTC loaded at run time (src/codegen/nvrtc.c): the
# compiles and ptxas's report (skipped where NVRTC is absent), and a library
# that is not there (MT_NVRTC_LIBRARY, set by the test itself).
# The file is compiled in: it needs nothing else of the codegen layer.
mt_test(test_nvrtc SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_nvrtc.c
        ${PROJECT_SOURCE_DIR}/src/codegen/nvrtc.c LAYERS mt_support)
mt_test(test_nvrtc_absent SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_nvrtc_absent.c
        ${PROJECT_SOURCE_DIR}/src/codegen/nvrtc.c LAYERS mt_support)
# CUDA C (src/codegen/cuda_c.c): hand-built GPU kernels printed, checked as
# text (one golden file, tests/golden/cuda_c/) and compiled with nvcc for
# sm_80 and sm_90 where nvcc is found (else skipped), and with NVRTC.
mt_test(test_cuda_c SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_cuda_c.c
        LAYERS mt_support mt_tir mt_codegen)
# The same CUDA C run on a GPU and compared with the CPU backend on the same
# TIR (elementwise checks of every expression kind, casts and intrinsic, and
# two whole kernels): skipped without nvcc or without a GPU.
mt_test(test_cuda_c_gpu SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_cuda_c_gpu.c
        ${PROJECT_SOURCE_DIR}/src/passes/tir/split_host_device.c LAYERS mt_support mt_tir mt_codegen)
