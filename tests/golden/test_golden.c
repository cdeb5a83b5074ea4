/*
 * test_golden.c -- golden IR text, pass by pass (TVM's before/after style).
 *
 * Every tests/golden/NAME.py starts with a line naming the passes to record:
 *
 *     # passes: build legalize fuse_tir inline_producers flatten_buffers
 *
 * The kernel is compiled with those passes in dump_after, and the text after
 * each, as "=== pass\n<text>", must equal tests/golden/NAME.expected. Each
 * pass's section is the "after" of that pass and the "before" of the next.
 *
 * MT_UPDATE_GOLDEN=1 rewrites the .expected files instead of comparing; the
 * diff is then reviewed like code.
 */
#include <dirent.h>
#include <stdlib.h>

#include "test_util.h"

/* Appends s to the growing buffer *buf. */
static void append(char **buf, size_t *len, const char *s) {
    size_t n = strlen(s);
    *buf = realloc(*buf, *len + n + 1);
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

static int check_one(const char *dir, const char *name) {
    char path[2048], passes[512];
    snprintf(path, sizeof path, "%s/%s.py", dir, name);
    char *src = test_read_file(path);
    if (!src || sscanf(src, "# passes: %511[^\n]", passes) != 1) {
        printf("FAIL %s: no '# passes:' header\n", name);
        free(src);
        return 1;
    }
    char list[512];
    snprintf(list, sizeof list, "%s", passes);
    for (char *p = list; *p; p++)
        if (*p == ' ') *p = ',';
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = name;
    o.dump_after = list;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    free(src);
    if (!k) {
        printf("FAIL %s: does not compile:\n%s", name, d.text);
        return 1;
    }
    char *got = NULL;
    size_t len = 0;
    append(&got, &len, "");
    for (char *tok = strtok(passes, " "); tok; tok = strtok(NULL, " ")) {
        const char *text = mt_kernel_pass_dump(k, tok);
        append(&got, &len, "=== ");
        append(&got, &len, tok);
        append(&got, &len, "\n");
        append(&got, &len, text ? text : "(no dump)\n");
    }
    mt_kernel_release(k);
    snprintf(path, sizeof path, "%s/%s.expected", dir, name);
    int rc = 0;
    if (getenv("MT_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(got, 1, len, f) != len) rc = 1;
        if (f) fclose(f);
        printf("updated %s\n", path);
    } else {
        char *want = test_read_file(path);
        if (!want || strcmp(want, got) != 0) {
            printf("FAIL %s: IR differs from %s\n--- got ---\n%s", name, path, got);
            rc = 1;
        }
        free(want);
    }
    free(got);
    return rc;
}

static void test_golden(void **state) {
    const char *root = getenv("MT_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/golden", root ? root : ".");
    DIR *dp = opendir(dir);
    if (!dp) fail_msg("cannot open %s", dir);
    int n = 0, failures = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name);
        if (len <= 3 || strcmp(e->d_name + len - 3, ".py") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 3), e->d_name);
        failures += check_one(dir, name);
        n++;
    }
    closedir(dp);
    printf("golden IR: %d kernels, %d failed\n", n, failures);
    assert_true(n >= 5);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden)};
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
