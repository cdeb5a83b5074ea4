/*
 * test_errors.c -- the error corpus (Halide's test/error, as data).
 *
 * Every tests/errors/corpus/NAME.py is a kernel that must fail to compile.
 * Its first line states the exact diagnostic it must produce:
 *
 *     # expect: MT_ERR_NAME 3:15 unknown name 'c'
 *
 * (status, line:col, message; line numbers count this header line). The
 * runner compiles each file through the public API and compares status,
 * place and message exactly; a file without the header fails the test.
 */
#include <dirent.h>
#include <stdlib.h>

#include "test_util.h"

static const char *const status_names[] = {
#define MT_X_(name, text) #name,
    MT_STATUS_LIST(MT_X_)
#undef MT_X_
};

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_corpus(void **state) {
    const char *root = getenv("MT_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/errors/corpus", root ? root : ".");
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    char *names[4096];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 4096;) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".py") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    int failures = 0;
    for (int i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *src = test_read_file(path);
        char status[64], msg[512];
        int line, col;
        if (!src || sscanf(src, "# expect: %63s %d:%d %511[^\n]", status, &line, &col, msg) != 4) {
            printf("FAIL %s: no '# expect: STATUS line:col message' header\n", names[i]);
            failures++;
            free(src);
            continue;
        }
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.filename = names[i];
        mt_diag dg;
        mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &dg);
        if (k) {
            printf("FAIL %s: compiled, expected %s\n", names[i], status);
            mt_kernel_release(k);
            failures++;
        } else if (strcmp(status_names[dg.status], status) != 0 || dg.line != line ||
                   dg.col != col || strcmp(dg.message, msg) != 0) {
            printf("FAIL %s:\n  want %s %d:%d %s\n  got  %s %d:%d %s\n", names[i], status, line, col,
                   msg, status_names[dg.status], dg.line, dg.col, dg.message);
            failures++;
        }
        free(src);
    }
    printf("error corpus: %d kernels, %d failed\n", n, failures);
    for (int i = 0; i < n; i++) free(names[i]);
    assert_true(n >= 20);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_corpus)};
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
