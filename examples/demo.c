/*
 * demo.c -- what minitriton does, end to end.
 *
 * Compiles the kernels in examples/kernels/ through the library, runs each on
 * tensors of ones, prints the results, and for the fusion example prints every
 * stage of the compiler: AST, graph, fused graph, TIR, scheduled TIR, LLVM IR
 * and assembly.
 *
 *     ./build/example_demo examples
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minitriton.h"

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

static void print_elem(const mt_tensor *t, int64_t i) {
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: {
        double v = ((const float *)mt_tensor_data(t))[i];
        printf(v == (double)(int64_t)v ? "%.0f." : "%g", v); /* NumPy writes 2. */
        break;
    }
    case MT_INT32: printf("%d", ((const int32_t *)mt_tensor_data(t))[i]); break;
    default: printf("?"); break;
    }
}

/* NumPy's array style: [[3. 3. 3.]\n [3. 3. 3.]] */
static void print_nested(const mt_tensor *t, int dim, int64_t *offset) {
    int ndim = mt_tensor_ndim(t);
    if (dim == ndim) {
        print_elem(t, (*offset)++);
        return;
    }
    printf("[");
    int64_t n = mt_tensor_shape(t)[dim];
    for (int64_t i = 0; i < n; i++) {
        if (i) {
            if (dim == ndim - 1)
                printf(" ");
            else
                printf("\n%*s", dim + 1, "");
        }
        print_nested(t, dim + 1, offset);
    }
    printf("]");
}

static void print_tensor(const mt_tensor *t) {
    int64_t off = 0;
    print_nested(t, 0, &off);
    printf("\n");
}

/* Compiles dir/name, runs it on ones, prints the result (and the stages). */
static int demo(mt_context *ctx, const char *dir, const char *name, int show_stages) {
    char path[1024];
    snprintf(path, sizeof path, "%s/kernels/%s", dir, name);
    char *src = read_file(path);
    if (!src) {
        fprintf(stderr, "demo: cannot read %s\n", path);
        return 1;
    }
    printf("==== %s ====\n%s\n", path, src);
    mt_compile_options opts;
    mt_compile_options_init(&opts);
    opts.filename = path;
    mt_diag diag;
    mt_kernel *k = mt_jit_compile(ctx, src, &opts, &diag);
    free(src);
    if (!k) {
        fputs(diag.text, stderr);
        return 1;
    }
    if (show_stages)
        for (int s = 0; s < MT_STAGE_COUNT_; s++) {
            const char *text = mt_kernel_dump(k, (mt_stage)s);
            printf("---- %s ----\n", mt_stage_str((mt_stage)s));
            if (text)
                printf("%s%s", text, text[0] && text[strlen(text) - 1] == '\n' ? "" : "\n");
            else
                printf("(not available: %s)\n", mt_kernel_dump_unavailable(k, (mt_stage)s));
        }

    int np = mt_kernel_num_params(k);
    mt_tensor *args[16] = {0};
    for (int i = 0; i < np && i < 16; i++) {
        int64_t shape[MT_MAX_RANK];
        int nd = mt_kernel_param_ndim(k, i);
        for (int d = 0; d < nd; d++) shape[d] = mt_kernel_param_dim(k, i, d);
        args[i] = mt_tensor_create(mt_kernel_param_dtype(k, i), nd, shape);
        float *p = mt_tensor_data(args[i]);
        for (int64_t j = 0; j < mt_tensor_numel(args[i]); j++) p[j] = 1.0f; /* ones */
    }
    mt_tensor *out = NULL;
    int rc = 0;
    if (mt_kernel_run(k, args, np, &out, 1, &diag) != MT_OK) {
        fputs(diag.text, stderr);
        rc = 1;
    } else {
        printf("---- result%s ----\n", np ? " (all inputs ones)" : "");
        print_tensor(out);
        printf("\n");
    }
    mt_tensor_release(out);
    for (int i = 0; i < np && i < 16; i++) mt_tensor_release(args[i]);
    mt_kernel_release(k);
    return rc;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "examples";
    printf("minitriton %s\n\n", mt_version());
    mt_context *ctx = mt_context_create(NULL);
    if (!ctx) {
        fprintf(stderr, "demo: cannot create a context (LLVM cannot target this machine?)\n");
        return 1;
    }
    int rc = 0;
    rc |= demo(ctx, dir, "const_add.py", 0);
    rc |= demo(ctx, dir, "add.py", 0);
    rc |= demo(ctx, dir, "fused_add.py", 1);
    mt_context_destroy(ctx);
    return rc;
}
