/*
 * api_internal.h -- library entry points for the test suite only.
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

#endif
