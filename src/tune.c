/*
 * tune.c -- mt_tune: the knobs of each kernel's schedule rule, searched by
 * measuring on this machine (minitriton.h, docs/schedule.md "Tuning").
 *
 * The program is compiled once with the default rules (uncached, keeping
 * each loop function's workload: its key, target and the rule that
 * scheduled it; pipeline.c). Its parameters get random values of their
 * shapes (floats uniform in [-1, 1], integers 0, so that an index is in
 * range), and the default's results are kept as the reference. Then, for
 * each workload whose rule has knobs (schedule/knobs.c), one at a time:
 *
 *  - Search: coordinate descent from the default. A pass tries, for each
 *    knob of the rule's table in order, each of its candidate values on
 *    top of the best knobs so far; a candidate is the whole program
 *    compiled with a one-record log for this workload (the other kernels
 *    keep their defaults), checked against the reference, and timed. One
 *    at least 1 % faster than the best becomes the best. Passes repeat
 *    while one improves, until TRIALS candidates were measured or the
 *    kernel's seconds are spent. A knob set tried once is not tried again,
 *    and a candidate whose scheduled TIR is that of a program timed
 *    before (the rule's own value, or a knob that does not apply to this
 *    shape: the few-rows knobs of a large matmul) takes that time without
 *    a run and is not counted as a trial -- so no-op knobs never win on
 *    noise, and the trials go to candidates that change the code.
 *    The tables are small (8 knobs of 2-6 values for the matmul rule: 31
 *    candidates a pass), so the first pass alone reaches every single-knob
 *    change; the order (threads and the schedule's structure first, then
 *    tiles and blocks) puts the changes that pay most on small shapes
 *    first. This is the search the issue asks to converge in seconds to
 *    minutes: a candidate costs its compile (50-300 ms) and its timing.
 *  - Timing: the fastest of 15 samples of warm runs (each sample about
 *    1 ms of runs, or one run), results written in place, so no allocation is timed.
 *    The fastest, not the median: on a shared machine other processes only
 *    ever add time, and the fastest sample is the most repeatable
 *    estimate of what the code costs (on the shared 2-core host of
 *    docs/performance.md, at loads of 5-9, `mtc --bench` medians of one
 *    kernel varied up to 10x from run to run; the fastest far less). What is timed is the whole
 *    program, in which the other kernels are a constant.
 *  - Pruning: each knob of the best is dropped again if the kernel is
 *    within 3 % without it (the rule's own value, or one that does not
 *    matter), so a record names only the knobs that pay.
 *  - Never slower: the best candidate and the default are timed again,
 *    alternately, five times each; unless the candidate's fastest is 5 %
 *    under the default's, the record keeps the default (no knobs).
 *
 * A candidate whose results differ from the default's (beyond float
 * reassociation: 1e-3 of the largest magnitude) is an internal error
 * naming the knobs: a knob in range must never give a wrong kernel.
 *
 * The log at tune->log is read first (its records of other kernels stay),
 * and rewritten whole through a temporary file (with the log's
 * permissions) and rename(); a log that is a symbolic link stays one (the
 * file it points at is rewritten).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "minitriton.h"
#include "schedule/tuning.h"
#include "support/arena.h"
#include "support/blake2s.h"
#include "support/common.h"
#include "support/diag.h"
#include "support/strbuf.h"

enum { SAMPLES = 15, CONFIRM = 5 };

typedef struct tuner {
    mt_context *ctx;
    const char *source;
    mt_compile_options opts;
    const mt_tune_options *to;
    mt_arena *a;
    mt_diag *diag;
    mt_tensor **args, **ref, **out; /* on the kernel's devices */
    mt_tensor **ref_host;           /* ref on the CPU, to compare with */
    int nargs, nres;
    mt_kernel *def;         /* the default's kernel */
    uint64_t rng;           /* the inputs' random state */
} tuner;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static mt_status fail(tuner *t, mt_status st, const char *msg) {
    mt_diag_set(t->diag, st, t->opts.filename, NULL, MT_NOLOC, msg);
    return st;
}

void mt_tune_options_init(mt_tune_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->trials = 64;
    o->seconds = 60;
}

/* ---- inputs and results ----------------------------------------------------------- */

static double next_unit(uint64_t *rng) { /* xorshift64*, in [-1, 1) */
    *rng ^= *rng >> 12, *rng ^= *rng << 25, *rng ^= *rng >> 27;
    return (double)((*rng * 0x2545f4914f6cdd1dULL) >> 11) / 4503599627370496.0 - 1.0;
}

static mt_tensor *random_tensor(uint64_t *rng, mt_dtype dt, int nd, const int64_t *shape) {
    mt_tensor *x = mt_tensor_create(dt, nd, shape);
    if (!x) return NULL;
    int64_t n = mt_tensor_numel(x);
    void *d = mt_tensor_data(x);
    if (dt == MT_FLOAT32) for (int64_t i = 0; i < n; i++) ((float *)d)[i] = (float)next_unit(rng);
    else if (dt == MT_FLOAT64) for (int64_t i = 0; i < n; i++) ((double *)d)[i] = next_unit(rng);
    else memset(d, 0, (size_t)(n * mt_dtype_size(dt)));
    return x;
}

static const mt_device host_device = {MT_DEVICE_CPU, 0};

static bool on_host(const mt_tensor *x) { return mt_tensor_device(x).type == MT_DEVICE_CPU; }

/* *x moved to device `where` (for a GPU kernel's parameters and results);
 * a tensor already there stays. */
static mt_status move_to(tuner *t, mt_tensor **x, mt_device where) {
    mt_device d = mt_tensor_device(*x);
    if (d.type == where.type && d.id == where.id) return MT_OK;
    mt_tensor *moved = NULL;
    mt_status st = mt_kernel_tensor_to(t->def, *x, where, &moved, t->diag);
    if (st != MT_OK) return st;
    mt_tensor_release(*x);
    *x = moved;
    return MT_OK;
}

/* Random arguments of the entry's shapes, on the devices the kernel takes
 * them on; MT_ERR_UNSUPPORTED for a symbolic dim. */
static mt_status make_args(tuner *t) {
    t->nargs = mt_kernel_num_params(t->def);
    t->args = MT_NEW_ARRAY(t->a, mt_tensor *, t->nargs > 0 ? t->nargs : 1);
    for (int i = 0; i < t->nargs; i++) {
        int nd = mt_kernel_param_ndim(t->def, i);
        int64_t shape[MT_MAX_RANK];
        for (int d = 0; d < nd; d++) {
            shape[d] = mt_kernel_param_dim(t->def, i, d);
            if (shape[d] >= 0) continue;
            char msg[300];
            snprintf(msg, sizeof msg,
                     "mt_tune: parameter '%s' has the symbolic dim '%s': tuning measures fixed shapes; "
                     "give the sizes in the source",
                     mt_kernel_param_name(t->def, i), mt_kernel_param_dim_name(t->def, i, d));
            return fail(t, MT_ERR_UNSUPPORTED, msg);
        }
        t->args[i] = random_tensor(&t->rng, mt_kernel_param_dtype(t->def, i), nd, shape);
        if (!t->args[i]) return fail(t, MT_ERR_NOMEM, "out of memory");
        mt_status st = move_to(t, &t->args[i], mt_kernel_param_device(t->def, i));
        if (st != MT_OK) return st;
    }
    return MT_OK;
}

/* Runs the default once for the reference results, and makes the tensors
 * the timed runs write in place. */
static mt_status make_results(tuner *t) {
    t->nres = mt_kernel_num_results(t->def);
    int n = t->nres > 0 ? t->nres : 1;
    t->ref = MT_NEW_ARRAY(t->a, mt_tensor *, n);
    t->out = MT_NEW_ARRAY(t->a, mt_tensor *, n);
    t->ref_host = MT_NEW_ARRAY(t->a, mt_tensor *, n);
    mt_status st = mt_kernel_run(t->def, t->args, t->nargs, t->ref, t->nres, t->diag);
    if (st != MT_OK) return st;
    for (int i = 0; i < t->nres; i++) {
        const mt_tensor *r = t->ref[i];
        t->out[i] = mt_tensor_create(mt_tensor_dtype(r), mt_tensor_ndim(r), mt_tensor_shape(r));
        if (!t->out[i]) return fail(t, MT_ERR_NOMEM, "out of memory");
        if ((st = move_to(t, &t->out[i], mt_tensor_device(r))) != MT_OK) return st;
        if (on_host(r)) mt_tensor_retain(t->ref_host[i] = t->ref[i]);
        else if ((st = mt_kernel_tensor_to(t->def, r, host_device, &t->ref_host[i], t->diag)) != MT_OK) return st;
    }
    return MT_OK;
}

static double get(const mt_tensor *x, int64_t i) {
    const void *d = mt_tensor_data(x);
    switch (mt_tensor_dtype(x)) {
    case MT_FLOAT32: return ((const float *)d)[i];
    case MT_FLOAT64: return ((const double *)d)[i];
    case MT_BFLOAT16: return mt_bf16_to_float(((const uint16_t *)d)[i]);
    case MT_INT32: return ((const int32_t *)d)[i];
    case MT_INT64: return (double)((const int64_t *)d)[i];
    default: return ((const uint8_t *)d)[i];
    }
}

/* Do t->out match the reference (to 1e-3 of each result's largest
 * magnitude)? A result on a GPU is copied to the host to compare. */
static bool same_results(tuner *t) {
    for (int r = 0; r < t->nres; r++) {
        const mt_tensor *ref = t->ref_host[r];
        mt_tensor *out = t->out[r];
        if (!on_host(out) && mt_kernel_tensor_to(t->def, t->out[r], host_device, &out, t->diag) != MT_OK) return false;
        int64_t n = mt_tensor_numel(ref);
        double big = 0;
        bool same = true;
        for (int64_t i = 0; i < n; i++) big = fmax(big, fabs(get(ref, i)));
        for (int64_t i = 0; i < n && same; i++) {
            double x = get(out, i), y = get(ref, i);
            same = !(isnan(x) != isnan(y) || fabs(x - y) > 1e-3 * big + 1e-6);
        }
        if (out != t->out[r]) mt_tensor_release(out);
        if (!same) return false;
    }
    return true;
}

/* ---- timing ------------------------------------------------------------------------- */

/* Milliseconds per run over reps runs; -1 on a failed run. */
static double run_ms(tuner *t, mt_kernel *k, int reps) {
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        if (mt_kernel_run(k, t->args, t->nargs, t->out, t->nres, t->diag) != MT_OK) return -1;
    return (now_s() - t0) * 1e3 / reps;
}

/* The fastest of v[0..n); -1 when one is (a failed run). */
static double fastest(const double *v, int n) {
    double m = v[0];
    for (int i = 0; i < n; i++) {
        if (v[i] < 0) return -1;
        if (v[i] < m) m = v[i];
    }
    return m;
}

/* The fastest of SAMPLES samples of warm runs, each about 1 ms or one run. */
static double measure(tuner *t, mt_kernel *k) {
    if (run_ms(t, k, 1) < 0) return -1; /* warm */
    double one = run_ms(t, k, 1);
    if (one < 0) return -1;
    int reps = one >= 1.0 ? 1 : one < 1e-3 ? 1000 : (int)(1.0 / one);
    double s[SAMPLES];
    for (int i = 0; i < SAMPLES; i++)
        if ((s[i] = run_ms(t, k, reps)) < 0) return -1;
    return fastest(s, SAMPLES);
}

/* ---- candidates ---------------------------------------------------------------------- */

static mt_tuning_record record_of(const mt_workload *w, const mt_knobs *k) {
    mt_tuning_record r;
    memset(&r, 0, sizeof r);
    memcpy(r.workload, w->key, sizeof r.workload);
    r.target = w->target;
    r.func = w->func;
    r.knobs = *k;
    r.ms = r.default_ms = -1;
    return r;
}

/* The program with knobs k for workload w. */
static mt_kernel *compile_with(tuner *t, const mt_workload *w, const mt_knobs *k) {
    mt_tuning_record r = record_of(w, k);
    const char *line = mt_tuning_record_json(t->a, &r);
    return mt_jit_compile_tuning(t->ctx, t->source, &t->opts, line, "<tuner>", MT_COMPILE_UNCACHED, t->diag);
}

/* A scheduled program already timed: the hash of its tir-sched text (the
 * "knobs" attribute left out) and its time. */
typedef struct timed {
    uint8_t h[MT_BLAKE2S_BYTES];
    double ms;
} timed;

typedef struct search {
    mt_knobs best;
    double best_ms;
    int trials;
    double deadline;
    MT_VEC(const char *) seen;   /* knob sets tried */
    MT_VEC(timed) codes;         /* programs timed */
} search;

static void code_hash(mt_kernel *k, uint8_t out[MT_BLAKE2S_BYTES]) {
    static const char key[] = "\"knobs\": \"";
    const char *p = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    mt_blake2s st;
    mt_blake2s_init(&st);
    while (p && *p) {
        const char *q = strstr(p, key);
        if (!q) {
            mt_blake2s_update(&st, p, strlen(p));
            break;
        }
        mt_blake2s_update(&st, p, (size_t)(q - p));
        const char *e = strchr(q + sizeof key - 1, '"');
        p = e ? e + 1 : q + strlen(q);
        if (!strncmp(p, ", ", 2)) p += 2;
    }
    mt_blake2s_final(&st, out);
}

/* The time of the program k's code was timed as, or -1. */
static double timed_before(const search *s, const uint8_t h[MT_BLAKE2S_BYTES]) {
    for (int i = 0; i < s->codes.len; i++)
        if (!memcmp(s->codes.data[i].h, h, MT_BLAKE2S_BYTES)) return s->codes.data[i].ms;
    return -1;
}

static void note_timed(tuner *t, search *s, const uint8_t h[MT_BLAKE2S_BYTES], double ms) {
    timed x;
    memcpy(x.h, h, MT_BLAKE2S_BYTES);
    x.ms = ms;
    MT_VEC_PUSH(t->a, &s->codes, x);
}

/* The candidate's time, its results checked; -1 (diag set) on an error.
 * A candidate that schedules the program exactly as one timed before (a
 * knob value that is the rule's own choice, or one that does not apply to
 * this shape) is not timed again: *same is set and that time returned. */
static double try_knobs(tuner *t, const mt_workload *w, search *s, const mt_knobs *k, bool *same) {
    mt_kernel *kk = compile_with(t, w, k);
    *same = false;
    if (!kk) return -1;
    uint8_t h[MT_BLAKE2S_BYTES];
    code_hash(kk, h);
    double ms = timed_before(s, h);
    if (ms >= 0) {
        *same = true;
        mt_kernel_release(kk);
        return ms;
    }
    ms = measure(t, kk);
    if (ms >= 0) note_timed(t, s, h, ms);
    if (ms >= 0 && !same_results(t)) {
        char msg[400];
        snprintf(msg, sizeof msg, "mt_tune: %s with knobs '%s' of rule %s gives other results than the default",
                 w->func, mt_knobs_str(t->a, k), k->rule);
        fail(t, MT_ERR_INTERNAL, msg);
        ms = -1;
    }
    mt_kernel_release(kk);
    return ms;
}

static bool seen_before(tuner *t, search *s, const mt_knobs *k) {
    const char *key = mt_knobs_str(t->a, k);
    for (int i = 0; i < s->seen.len; i++)
        if (!strcmp(s->seen.data[i], key)) return true;
    MT_VEC_PUSH(t->a, &s->seen, key);
    return false;
}

/* One pass of coordinate descent: 1 improved, 0 not, -1 error. Stops at the budget. */
static int pass(tuner *t, const mt_workload *w, const mt_rule_knobs *sp, search *s) {
    int improved = 0;
    for (int d = 0; d < sp->n; d++)
        for (int c = 0; c < sp->defs[d].ncand; c++) {
            /* room left to prune each knob of the best */
            if (s->trials + s->best.n >= t->to->trials || now_s() > s->deadline) return improved;
            mt_knobs k = s->best;
            mt_knobs_set(&k, sp->defs[d].name, sp->defs[d].cand[c]);
            if (seen_before(t, s, &k)) continue;
            bool same;
            double ms = try_knobs(t, w, s, &k, &same);
            if (ms < 0) return -1;
            if (same) continue; /* not a trial: nothing was timed */
            s->trials++;
            if (ms < s->best_ms * 0.97) {
                s->best = k;
                s->best_ms = ms;
                improved = 1;
            }
        }
    return improved;
}

/* Drops each knob of the best whose removal costs under 3 % (a value that
 * is the rule's own choice anyway, or one that does not matter): the
 * record keeps only the knobs that pay. Within the budget. */
static int prune(tuner *t, const mt_workload *w, search *s) {
    for (int i = s->best.n - 1; i >= 0; i--) {
        if (s->trials >= t->to->trials || now_s() > s->deadline) return 0;
        mt_knobs k = s->best;
        memmove(&k.kv[i], &k.kv[i + 1], sizeof k.kv[0] * (size_t)(k.n - i - 1));
        k.n--;
        bool same = false;
        double ms = k.n ? try_knobs(t, w, s, &k, &same) : measure(t, t->def);
        if (ms < 0) return -1;
        s->trials += !same;
        if (ms <= s->best_ms * 1.03) {
            s->best = k;
            if (ms < s->best_ms) s->best_ms = ms;
        }
    }
    return 0;
}

/* Times the default and the best alternately; keeps the default unless the
 * best is clearly faster. Fills rec's knobs and times. */
static mt_status confirm(tuner *t, const mt_workload *w, search *s, mt_tuning_record *rec) {
    double md[CONFIRM], mb[CONFIRM];
    mt_kernel *kb = s->best.n ? compile_with(t, w, &s->best) : NULL;
    if (s->best.n && !kb) return t->diag->status;
    for (int i = 0; i < CONFIRM; i++) {
        md[i] = measure(t, t->def);
        mb[i] = kb ? measure(t, kb) : md[i];
    }
    mt_kernel_release(kb);
    double d = fastest(md, CONFIRM), b = fastest(mb, CONFIRM);
    if (d < 0 || b < 0) return t->diag->status;
    if (!(b < d * 0.95)) {
        s->best.n = 0;
        b = d;
    }
    *rec = record_of(w, &s->best);
    rec->ms = b;
    rec->default_ms = d;
    return MT_OK;
}

static mt_status tune_one(tuner *t, const mt_workload *w, mt_tuning_log *log) {
    const mt_rule_knobs *sp = mt_knob_space(w->rule);
    search s;
    memset(&s, 0, sizeof s);
    s.best.rule = w->rule;
    s.best_ms = measure(t, t->def);
    s.deadline = now_s() + t->to->seconds;
    if (s.best_ms < 0) return t->diag->status;
    uint8_t h[MT_BLAKE2S_BYTES];
    code_hash(t->def, h);
    note_timed(t, &s, h, s.best_ms);
    int r;
    while ((r = pass(t, w, sp, &s)) == 1) {}
    if (r < 0 || prune(t, w, &s) < 0) return t->diag->status;
    mt_tuning_record rec;
    mt_status st = confirm(t, w, &s, &rec);
    if (st != MT_OK) return st;
    mt_tuning_put(t->a, log, &rec);
    if (t->to->report) {
        mt_tune_result res = {w->func, w->rule, mt_knobs_str(t->a, &rec.knobs), rec.default_ms, rec.ms, s.trials};
        t->to->report(t->to->user, &res);
    }
    return MT_OK;
}

/* ---- the log file --------------------------------------------------------------------- */

/* The log at path (none yet: empty). */
static mt_status read_existing(tuner *t, mt_tuning_log *log) {
    struct stat st;
    memset(log, 0, sizeof *log);
    if (stat(t->to->log, &st) == 0 && !S_ISREG(st.st_mode)) { /* refused before tuning, not at the rewrite */
        mt_diag_set(t->diag, MT_ERR_IO, t->to->log, NULL, MT_NOLOC, "cannot use tuning log: not a regular file");
        return MT_ERR_IO;
    }
    FILE *fp = fopen(t->to->log, "rb");
    if (!fp) {
        if (errno == ENOENT) return MT_OK;
        char msg[300];
        snprintf(msg, sizeof msg, "cannot read tuning log: %s", strerror(errno));
        mt_diag_set(t->diag, MT_ERR_IO, t->to->log, NULL, MT_NOLOC, msg);
        return MT_ERR_IO;
    }
    mt_sb sb;
    mt_sb_init(&sb, t->a);
    char buf[4096];
    size_t n;
    while (sb.len <= MT_MAX_TUNING_LOG_BYTES && (n = fread(buf, 1, sizeof buf, fp)) > 0) mt_sb_putn(&sb, buf, n);
    fclose(fp);
    if (sb.len > MT_MAX_TUNING_LOG_BYTES) {
        mt_diag_set(t->diag, MT_ERR_INVALID_ARG, t->to->log, NULL, MT_NOLOC, "tuning log: larger than 256 MiB");
        return MT_ERR_INVALID_ARG;
    }
    const char *text = mt_sb_str(&sb);
    if (!mt_tuning_no_nul(text, sb.len, t->to->log, t->diag) || !mt_tuning_check(text, t->to->log, t->diag))
        return t->diag->status;
    mt_tuning_error err;
    mt_tuning_parse(t->a, text, t->to->log, log, &err);
    return MT_OK;
}

static mt_status write_failed(tuner *t) {
    char msg[300];
    snprintf(msg, sizeof msg, "cannot write tuning log: %s", strerror(errno));
    mt_diag_set(t->diag, MT_ERR_IO, t->to->log, NULL, MT_NOLOC, msg);
    return MT_ERR_IO;
}

static bool put_records(tuner *t, FILE *fp, const mt_tuning_log *log) {
    bool ok = fp != NULL;
    for (int i = 0; ok && i < log->n; i++) ok = fputs(mt_tuning_record_json(t->a, &log->recs[i]), fp) >= 0;
    if (fp && fclose(fp) != 0) ok = false;
    return ok;
}

/* Where the symbolic link at path points (relative to its directory). */
static const char *link_target(mt_arena *a, const char *path) {
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0) return NULL;
    buf[n] = 0;
    const char *slash = strrchr(path, '/');
    if (buf[0] == '/' || !slash) return mt_arena_strdup(a, buf);
    return mt_arena_printf(a, "%.*s/%s", (int)(slash - path + 1), path, buf);
}

/* The file the log names, symbolic links followed (the rewrite replaces
 * what a link points at, and the link stays), also to a file that does not
 * exist yet; NULL with errno set when the links do not resolve. */
static const char *log_file(tuner *t) {
    const char *p = t->to->log;
    for (int hops = 0; hops < 40 && p; hops++) {
        struct stat lst;
        if (lstat(p, &lst) != 0) return errno == ENOENT ? p : NULL;
        if (!S_ISLNK(lst.st_mode)) return p;
        p = link_target(t->a, p);
    }
    if (p) errno = ELOOP;
    return NULL;
}

/* The temporary file, beside the log's file, is the process's and the
 * tuner's own (two threads tuning into one log each write theirs; the last
 * rename wins), and takes the log's permissions (a 0600 log stays 0600). */
static mt_status write_log(tuner *t, const mt_tuning_log *log) {
    const char *file = log_file(t);
    if (!file) return write_failed(t);
    const char *tmp = mt_arena_printf(t->a, "%s.tmp%ld.%p", file, (long)getpid(), (void *)t);
    struct stat st;
    bool had = stat(file, &st) == 0;
    bool ok = put_records(t, fopen(tmp, "wb"), log);
    if (ok && had && chmod(tmp, st.st_mode & 07777) != 0) ok = false;
    if (ok && rename(tmp, file) == 0) return MT_OK;
    mt_status s = write_failed(t);
    remove(tmp);
    return s;
}

/* ---- the entry point --------------------------------------------------------------------- */

static mt_status check_args(tuner *t, const mt_compile_options *opts) {
    if (!t->ctx || !t->source || !t->to || !t->to->log)
        return fail(t, MT_ERR_INVALID_ARG, "mt_tune: context, source, tune options and tune->log are required");
    if (t->to->trials < 1 || !(t->to->seconds > 0))
        return fail(t, MT_ERR_INVALID_ARG, "mt_tune: trials must be at least 1 and seconds above 0");
    if (opts && opts->target == MT_TARGET_CUDA && opts->emulate)
        return fail(t, MT_ERR_UNAVAILABLE,
                    "mt_tune: the emulation's timings say nothing about a GPU: tune target cuda on a GPU "
                    "(without emulate), or target cpu");
    return MT_OK;
}

/* Tunes every workload of the program once (the same key twice: once). */
static mt_status tune_all(tuner *t, mt_tuning_log *log) {
    const mt_workload *ws;
    int n = mt_kernel_workloads(t->def, &ws);
    for (int i = 0; i < n; i++) {
        if (!ws[i].rule || !mt_knob_space(ws[i].rule)) continue;
        bool dup = false;
        for (int j = 0; j < i; j++) dup |= ws[j].rule && !strcmp(ws[j].key, ws[i].key);
        if (dup) continue;
        mt_status st = tune_one(t, &ws[i], log);
        if (st != MT_OK) return st;
    }
    return MT_OK;
}

static void cleanup(tuner *t) {
    for (int i = 0; t->args && i < t->nargs; i++) mt_tensor_release(t->args[i]);
    for (int i = 0; t->ref && i < t->nres; i++) {
        mt_tensor_release(t->ref[i]);
        mt_tensor_release(t->out[i]);
        mt_tensor_release(t->ref_host[i]);
    }
    mt_kernel_release(t->def);
    mt_arena_destroy(t->a);
}

mt_status mt_tune(mt_context *ctx, const char *source, const mt_compile_options *opts,
                  const mt_tune_options *tune, mt_diag *diag) {
    mt_diag local;
    if (!diag) diag = &local; /* its status tells what failed */
    mt_diag_clear(diag);
    tuner t;
    memset(&t, 0, sizeof t);
    t.ctx = ctx, t.source = source, t.to = tune, t.diag = diag;
    t.rng = 0x9e3779b97f4a7c15u;
    mt_compile_options_init(&t.opts);
    if (opts) t.opts = *opts;
    t.opts.tuning_log = NULL;
    mt_status st = check_args(&t, opts);
    if (st != MT_OK) return st;
    if (!(t.a = mt_arena_create())) return fail(&t, MT_ERR_NOMEM, "out of memory");
    mt_tuning_log log;
    st = read_existing(&t, &log);
    if (st == MT_OK) {
        t.def = mt_jit_compile_tuning(ctx, source, &t.opts, NULL, NULL, MT_COMPILE_UNCACHED | MT_COMPILE_WORKLOADS, diag);
        st = !t.def ? diag->status : make_args(&t);
    }
    if (st == MT_OK) st = make_results(&t);
    if (st == MT_OK) st = tune_all(&t, &log);
    if (st == MT_OK) st = write_log(&t, &log);
    cleanup(&t);
    return st;
}
