# The runtime's devices (src/runtime/device*.c): the device interface and the
# test device on their own, and hand-made plans that run on the CPU and the
# test device, with copies between them.
mt_test(test_devices SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_devices.c LIBRARY)
mt_test(test_hetero SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_hetero.c LIBRARY)
# The CUDA device (src/runtime/device_cuda.c, cuda_driver.c): on a machine
# without a GPU, the reason it is unavailable (the rest skipped); with one,
# memory, NVRTC-compiled and PTX kernels, launches and their errors. The
# whole library: the runtime layer alone needs the codegen layer's parallel
# runtime, and the test NVRTC.
mt_test(test_cuda_device SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_cuda_device.c LIBRARY STATIC)
# The driver missing (MT_CUDA_DRIVER_LIBRARY=/nonexistent/...), and the
# toolkit's link stub, whose cuInit refuses, where the toolkit has one.
mt_test(test_cuda_absent SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_cuda_absent.c LIBRARY)
if(EXISTS /usr/local/cuda/lib64/stubs/libcuda.so)
  add_test(NAME test_cuda_stub COMMAND test_cuda_absent /usr/local/cuda/lib64/stubs/libcuda.so
           CUDA_ERROR_STUB_LIBRARY)
endif()
# DLPack in and out (src/runtime/dlpack.c): import, export, refusals, round trips
mt_test(test_dlpack SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_dlpack.c LIBRARY)
# The device blocks kept for reuse (src/runtime/blockcache.c), threads included
mt_test(test_blockcache SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_blockcache.c LIBRARY)
# A host function's GPU frame (src/runtime/gpu_launch.c): each buffer goes back with its capacity
mt_test(test_gpu_frame SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_gpu_frame.c LIBRARY)
