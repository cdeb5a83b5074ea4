# The runtime's devices (src/runtime/device*.c): the device interface and the
# test device on their own, and hand-made plans that run on the CPU and the
# test device, with copies between them.
mt_test(test_devices SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_devices.c LIBRARY)
mt_test(test_hetero SOURCES ${PROJECT_SOURCE_DIR}/tests/runtime/test_hetero.c LIBRARY)
