/*
 * api_internal.h -- library entry points for the test suite and for the
 * tuner (src/tune.c), which compiles through api.c.
 */
#ifndef MT_API_INTERNAL_H
#define MT_API_INTERNAL_H

#include <stdbool.h>

#include "minitriton.h"

/* mt_context_create; with test_device, `with device("gpu")` (and "cuda",
 * "cuda:N") in the sources this context compiles means the test device
 * (runtime/device.h): host code run against memory kept apart from the
 * host's, so that heterogeneous programs are tested without a GPU. */
mt_context *mt_context_create_testing(const mt_context_options *opts, bool test_device);

/* That context's test device (runtime/device.h), or NULL. Owned by ctx. */
struct mt_dev *mt_context_test_device(mt_context *ctx);

/* mt_jit_compile with a tuning log given as its text (log_file names it in
 * diagnostics; text NULL: none) instead of opts->tuning_log, which is
 * ignored. flags: MT_COMPILE_UNCACHED bypasses the context's caches (the
 * tuner's candidates would fill them); MT_COMPILE_WORKLOADS keeps each loop
 * function's workload (mt_kernel_workloads). */
enum { MT_COMPILE_UNCACHED = 1, MT_COMPILE_WORKLOADS = 2 };
mt_kernel *mt_jit_compile_tuning(mt_context *ctx, const char *source, const mt_compile_options *opts,
                                 const char *log_text, const char *log_file, int flags, mt_diag *diag);

/* Checks a tuning log's text: false with diag at FILE:LINE:COL. */
bool mt_tuning_check(const char *text, const char *file, mt_diag *diag);
/* The largest tuning log read (a log is a line per kernel and target; a
 * device file such as /dev/zero would be read until memory ran out). */
#define MT_MAX_TUNING_LOG_BYTES ((size_t)256 << 20)

/* A tuning log read as n bytes holds no NUL (which would end its text
 * early, the rest unread): false with diag at FILE:LINE:COL. */
bool mt_tuning_no_nul(const char *text, size_t n, const char *file, mt_diag *diag);

/* The loop functions of a kernel compiled with MT_COMPILE_WORKLOADS (the
 * others: 0). Owned by k. */
struct mt_workload;
int mt_kernel_workloads(const mt_kernel *k, const struct mt_workload **out);

#endif
