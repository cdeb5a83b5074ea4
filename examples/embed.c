/*
 * embed.c -- the smallest complete host program: compile a kernel from a
 * string, run it on the program's own buffers, check the result.
 *
 * Against an installed minitriton (cmake --install; README "Installing"):
 *
 *     cc embed.c $(pkg-config --cflags --libs minitriton) && ./a.out
 *     cc embed.c $(pkg-config --cflags --libs minitriton-static) && ./a.out
 *
 * or from CMake: find_package(minitriton) and link minitriton::minitriton
 * (or minitriton::minitriton_static). In the build tree it is example_embed.
 */
#include <stdio.h>

#include "minitriton.h"

static const char *source =
    "def scale_shift(x: Tensor((\"n\",), \"float32\"), y: Tensor((\"n\",), \"float32\")):\n"
    "    out = x * 2.0 + y\n"
    "    return out\n";

int main(void) {
    mt_context *ctx = mt_context_create(NULL);
    if (!ctx) {
        fprintf(stderr, "cannot create a minitriton context\n");
        return 1;
    }
    mt_compile_options opts;
    mt_compile_options_init(&opts);
    opts.filename = "scale_shift.py";
    mt_diag diag;
    mt_kernel *k = mt_jit_compile(ctx, source, &opts, &diag);
    if (!k) {
        fputs(diag.text, stderr);
        mt_context_destroy(ctx);
        return 1;
    }

    /* The host's buffers, borrowed (not copied) by the tensors. */
    float x[5] = {1, 2, 3, 4, 5}, y[5] = {10, 20, 30, 40, 50}, out[5];
    int64_t shape[1] = {5};
    mt_tensor *args[2] = {mt_tensor_wrap(x, MT_FLOAT32, 1, shape, NULL),
                          mt_tensor_wrap(y, MT_FLOAT32, 1, shape, NULL)};
    mt_tensor *result = mt_tensor_wrap(out, MT_FLOAT32, 1, shape, NULL); /* written in place */

    int rc = 0;
    if (mt_kernel_run(k, args, 2, &result, 1, &diag) != MT_OK) {
        fputs(diag.text, stderr);
        rc = 1;
    } else {
        for (int i = 0; i < 5; i++) {
            printf("%g%s", out[i], i < 4 ? " " : "\n");
            if (out[i] != x[i] * 2 + y[i]) rc = 1;
        }
    }
    mt_tensor_release(result);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    return rc;
}
