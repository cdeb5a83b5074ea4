/*
 * numpy_ref.c -- NumPy's MLP as a reference measured in the same run.
 *
 * The MLP goal of the performance issue is "faster than NumPy on OpenBLAS";
 * NumPy's time moves with the host (3.9 ms at batch 4096 on an earlier Zen 5 host, about 7 ms on 2026-11-23's Zen 4 host), so the benchmark
 * measures it beside the kernel: bench/numpy_mlp.py in a child python3
 * (MT_BENCH_PYTHON, else /usr/bin/python3, which has Debian's python3-numpy)
 * with OPENBLAS_NUM_THREADS set to the row's thread count.
 */
#define _GNU_SOURCE
#include "numpy_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MT_BENCH_NUMPY_SCRIPT
#define MT_BENCH_NUMPY_SCRIPT "bench/numpy_mlp.py"
#endif

static const char *python(void) {
    const char *p = getenv("MT_BENCH_PYTHON");
    if (p && *p) return p;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

bool numpy_mlp_measure(int threads, numpy_mlp_ref *out, char *why, size_t why_cap) {
    memset(out, 0, sizeof *out);
    const char *py = python(), *script = MT_BENCH_NUMPY_SCRIPT;
    if (strchr(py, '\'') || strchr(script, '\'')) {
        snprintf(why, why_cap, "a quote in the python or script path");
        return false;
    }
    if (access(script, R_OK) != 0) {
        snprintf(why, why_cap, "%s not found", script);
        return false;
    }
    char cmd[8192];
    /* OPENBLAS_THREAD_TIMEOUT is mt_bench's setting for its own OpenBLAS: NumPy
     * runs with OpenBLAS's default, as its users do */
    snprintf(cmd, sizeof cmd, "unset OPENBLAS_THREAD_TIMEOUT; OPENBLAS_NUM_THREADS=%d '%s' '%s' 2>&1",
             threads, py, script);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(why, why_cap, "cannot start %s", py);
        return false;
    }
    char line[512], last[512] = "";
    int got = 0;
    while (fgets(line, sizeof line, f)) {
        int batch;
        double med, best;
        char ver[32];
        if (sscanf(line, "mlp %d %lf %lf %31s", &batch, &med, &best, ver) == 4 && isfinite(med) &&
            med > 0) {
            if (batch == 4096) out->batch4096_s = med, got |= 1;
            if (batch == 1) out->batch1_s = med, got |= 2;
            snprintf(out->version, sizeof out->version, "%s", ver);
        } else {
            snprintf(last, sizeof last, "%s", line);
        }
    }
    int rc = pclose(f);
    if (rc != 0 || got != 3) {
        last[strcspn(last, "\n")] = 0;
        for (char *c = last; *c; c++)
            if (*c == '|') *c = '/'; /* the reason goes into a Markdown table */
        char status[48] = "";
        if (rc == -1) snprintf(status, sizeof status, " (no exit status)");
        else if (WIFEXITED(rc) && WEXITSTATUS(rc)) snprintf(status, sizeof status, " (exit %d)", WEXITSTATUS(rc));
        else if (WIFSIGNALED(rc)) snprintf(status, sizeof status, " (signal %d)", WTERMSIG(rc));
        snprintf(why, why_cap, "%s %s failed%s%s%s%s", py, script, status, last[0] ? ": " : "",
                 last, rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 127 ? "" : " (python3-numpy installed?)");
        return false;
    }
    return true;
}
