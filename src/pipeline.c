/*
 * pipeline.c -- the pass list, in one place.
 *
 *   parse                        source -> AST                (stage "ast")
 *   build                        AST -> graph IR              (stage "graph")
 *   fold_constant, cse, dead_code, to_dataflow, legalize, annotate_pattern,
 *   fuse_ops, fuse_tir, dead_code
 *                                                             (stage "graph-opt")
 *   per loop function:
 *     inline_producers                                        (stage "tir")
 *     schedule_matmul (register-tiled matmul + epilogue, emitted lowered),
 *     schedule_reduce (row reductions + their row-wise stages, lowered),
 *     schedule (default CPU rules), lower_blocks, flatten_buffers,
 *     simplify, vectorize, remove_unit_loops, simplify, tir_cse
 *                                                             (stage "tir-sched")
 *
 * After any pass, the IR can be recorded by naming the pass in
 * mt_compile_options.dump_after ("fuse_ops,simplify"); mt_kernel_pass_dump
 * returns it.
 *
 * In debug builds, and when MT_VERIFY_TIR=1, the TIR verifier (tir/verify.h)
 * checks the loop functions the graph passes made and every function after
 * every TIR pass, in the form that pass leaves (block until lower_blocks,
 * lowered after it, flat from flatten_buffers on; a function a pass returned
 * unchanged is not checked again); a failure is an internal error that
 * names the pass.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/parser.h"
#include "graph/builder.h"
#include "passes/graph/graph_passes.h"
#include "passes/tir/tir_passes.h"
#include "schedule/schedule.h"
#include "support/strbuf.h"
#include "tir/verify.h"

static const struct {
    const char *name;
    mt_graph_pass_fn run;
} graph_passes[] = {
    {"fold_constant", mt_graph_fold_constant},
    {"cse", mt_graph_cse},
    {"dead_code", mt_graph_dead_code},
    {"to_dataflow", mt_graph_to_dataflow},
    {"legalize", mt_graph_legalize},
    {"annotate_pattern", mt_graph_annotate_pattern},
    {"fuse_ops", mt_graph_fuse_ops},
    {"fuse_tir", mt_graph_fuse_tir},
    {"dead_code", mt_graph_dead_code},
};

/* The TIR passes after the "tir" stage; schedule is the target's rule. */
static const struct {
    const char *name;
    mt_tfunc *(*run)(mt_arena *, mt_tfunc *);
} tir_passes[] = {
    {"schedule_matmul", mt_schedule_matmul_pass},
    {"schedule_reduce", mt_schedule_reduce_pass},
    {"schedule", mt_schedule_default_cpu},
    {"lower_blocks", mt_tir_lower_blocks},
    {"flatten_buffers", mt_tir_flatten_buffers},
    {"simplify", mt_tir_simplify},
    {"vectorize", mt_tir_vectorize},
    {"remove_unit_loops", mt_tir_remove_unit_loops},
    {"simplify", mt_tir_simplify},
    {"tir_cse", mt_tir_cse},
};

const char *const mt_pipeline_pass_names[] = {
    "parse", "build", "fold_constant", "cse", "to_dataflow", "legalize", "annotate_pattern", "fuse_ops", "fuse_tir",
    "dead_code", "inline_producers", "schedule_matmul", "schedule_reduce", "schedule", "lower_blocks", "flatten_buffers", "simplify",
    "vectorize", "remove_unit_loops", "tir_cse", NULL,
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is `pass` in the comma-separated list? */
static bool wanted(const char *list, const char *pass) {
    if (!list) return false;
    size_t n = strlen(pass);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, pass, n) == 0) return true;
        if (len == 3 && strncmp(p, "all", 3) == 0) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

const char *mt_pipeline_unknown_pass(const char *list, int *len) {
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        bool known = n == 0 || (n == 3 && strncmp(p, "all", 3) == 0); /* empty names: none */
        for (int i = 0; !known && mt_pipeline_pass_names[i]; i++)
            known = strlen(mt_pipeline_pass_names[i]) == n && strncmp(p, mt_pipeline_pass_names[i], n) == 0;
        if (!known) {
            *len = n > 64 ? 64 : (int)n;
            return p;
        }
        if (!e) break;
        p = e + 1;
    }
    return NULL;
}

static void record(mt_arena *a, mt_compiled *out, const char *pass, const char *text) {
    mt_pass_dump *nd = MT_NEW_ARRAY(a, mt_pass_dump, out->npass_dumps + 1);
    if (out->npass_dumps) memcpy(nd, out->pass_dumps, sizeof *nd * (size_t)out->npass_dumps);
    nd[out->npass_dumps].pass = pass;
    nd[out->npass_dumps].text = text;
    out->pass_dumps = nd;
    out->npass_dumps++;
}

static const char *print_tfuncs(mt_arena *a, mt_tfunc *const *fs, int n) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_putc(&sb, '\n');
        mt_sb_puts(&sb, mt_tfunc_print(a, fs[i]));
    }
    return mt_sb_str(&sb);
}

/* ---- the TIR verifier between passes ------------------------------------- */

static bool verify_env;
static void read_verify_env(void) {
    const char *v = getenv("MT_VERIFY_TIR");
    verify_env = v && strcmp(v, "1") == 0;
}

#ifdef NDEBUG
enum { VERIFY_ALWAYS = 0 };
#else
enum { VERIFY_ALWAYS = 1 }; /* debug builds */
#endif

static bool verify_enabled(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (VERIFY_ALWAYS) return true;
    pthread_once(&once, read_verify_env);
    return verify_env;
}

/* The form TIR is in after `pass` (forms only advance). */
static mt_tir_form form_after(const char *pass, mt_tir_form form) {
    if (strcmp(pass, "lower_blocks") == 0) return MT_TIR_LOWERED;
    if (strcmp(pass, "flatten_buffers") == 0) return MT_TIR_FLAT;
    return form;
}

/* What was verified last: a pass that returns a function unchanged (the
 * same pointer: passes never modify their input) in the same form needs
 * no second look. */
typedef struct verified {
    const mt_tfunc **fs; /* fs[i]: the function last verified in slot i ... */
    mt_tir_form form;    /* ... in this form */
} verified;

static void verify_tir(mt_arena *a, verified *v, const char *pass, mt_tfunc *const *fs, int n,
                       mt_tir_form form) {
    if (!verify_enabled()) return;
    if (!v->fs) v->fs = MT_NEW_ARRAY(a, const mt_tfunc *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        if (v->fs[i] == fs[i] && v->form == form) continue;
        const char *err = mt_tir_verify(a, fs[i], form);
        if (err) mt_ice("TIR verifier after pass '%s': %s", pass, err);
        v->fs[i] = fs[i];
    }
    v->form = form;
}

void mt_pipeline_run(mt_arena *a, const char *src, size_t len, const mt_compile_options *opts,
                     mt_compiled *out) {
    memset(out, 0, sizeof *out);
    const char *dump_after = opts ? opts->dump_after : NULL;
    double t0 = now_ms();

    mt_ast *ast = mt_parse(a, src, len, NULL);
    out->dumps[MT_STAGE_AST] = mt_ast_print(a, ast);
    if (wanted(dump_after, "parse")) record(a, out, "parse", out->dumps[MT_STAGE_AST]);

    mt_build_options bo = {opts ? opts->entry : NULL, opts ? opts->unroll_threshold : 16};
    mt_gmodule *m = mt_build_graph(a, ast, &bo);
    out->dumps[MT_STAGE_GRAPH] = mt_gmodule_print(a, m, false);
    if (wanted(dump_after, "build")) record(a, out, "build", out->dumps[MT_STAGE_GRAPH]);
    double t1 = now_ms();

    for (size_t i = 0; i < sizeof graph_passes / sizeof graph_passes[0]; i++) {
        m = graph_passes[i].run(a, m);
        if (wanted(dump_after, graph_passes[i].name))
            record(a, out, graph_passes[i].name, mt_gmodule_print(a, m, true));
    }
    out->dumps[MT_STAGE_GRAPH_OPT] = mt_gmodule_print(a, m, false);
    out->module = m;
    out->entry = m->funcs[0];
    double t2 = now_ms();

    /* TIR: the "tir" stage is the fused functions with producers inlined */
    mt_tfunc **fs = MT_NEW_ARRAY(a, mt_tfunc *, m->ntfuncs > 0 ? m->ntfuncs : 1);
    mt_tir_form form = MT_TIR_BLOCK;
    verified vf = {NULL, form};
    verify_tir(a, &vf, "fuse_tir", m->tfuncs, m->ntfuncs, form);
    for (int i = 0; i < m->ntfuncs; i++) fs[i] = mt_tir_inline_producers(a, m->tfuncs[i]);
    verify_tir(a, &vf, "inline_producers", fs, m->ntfuncs, form);
    out->dumps[MT_STAGE_TIR] = print_tfuncs(a, fs, m->ntfuncs);
    if (wanted(dump_after, "inline_producers"))
        record(a, out, "inline_producers", out->dumps[MT_STAGE_TIR]);
    for (size_t p = 0; p < sizeof tir_passes / sizeof tir_passes[0]; p++) {
        for (int i = 0; i < m->ntfuncs; i++) fs[i] = tir_passes[p].run(a, fs[i]);
        form = form_after(tir_passes[p].name, form);
        verify_tir(a, &vf, tir_passes[p].name, fs, m->ntfuncs, form);
        if (wanted(dump_after, tir_passes[p].name))
            record(a, out, tir_passes[p].name, print_tfuncs(a, fs, m->ntfuncs));
    }
    out->dumps[MT_STAGE_TIR_SCHED] = print_tfuncs(a, fs, m->ntfuncs);
    out->lowered = fs;
    out->nlowered = m->ntfuncs;
    double t3 = now_ms();
    out->ms_frontend = t1 - t0;
    out->ms_graph = t2 - t1;
    out->ms_tir = t3 - t2;
}
