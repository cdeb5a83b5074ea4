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
 *   split_host_device (all loop functions at once: adds device functions)
 *                                                             (stage "tir-sched")
 *
 * After any pass, the IR can be recorded by naming the pass in
 * mt_compile_options.dump_after ("fuse_ops,simplify"); mt_kernel_pass_dump
 * returns it.
 */
#include "pipeline.h"

#include <string.h>
#include <time.h>

#include "frontend/parser.h"
#include "graph/builder.h"
#include "passes/graph/graph_passes.h"
#include "passes/tir/tir_passes.h"
#include "schedule/schedule.h"
#include "support/strbuf.h"

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
    "vectorize", "remove_unit_loops", "tir_cse", "split_host_device", NULL,
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

/* Each host function followed by the device functions it launches. */
static const char *print_split(mt_arena *a, const mt_tsplit *sp, int n) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_putc(&sb, '\n');
        mt_sb_puts(&sb, mt_tfunc_print(a, sp->host[i]));
        for (int d = sp->first_device[i]; d < sp->first_device[i + 1]; d++) {
            mt_sb_putc(&sb, '\n');
            mt_sb_puts(&sb, mt_tfunc_print(a, sp->device[d]));
        }
    }
    return mt_sb_str(&sb);
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
    for (int i = 0; i < m->ntfuncs; i++) fs[i] = mt_tir_inline_producers(a, m->tfuncs[i]);
    out->dumps[MT_STAGE_TIR] = print_tfuncs(a, fs, m->ntfuncs);
    if (wanted(dump_after, "inline_producers"))
        record(a, out, "inline_producers", out->dumps[MT_STAGE_TIR]);
    for (size_t p = 0; p < sizeof tir_passes / sizeof tir_passes[0]; p++) {
        for (int i = 0; i < m->ntfuncs; i++) fs[i] = tir_passes[p].run(a, fs[i]);
        if (wanted(dump_after, tir_passes[p].name))
            record(a, out, tir_passes[p].name, print_tfuncs(a, fs, m->ntfuncs));
    }
    mt_tsplit sp;
    mt_tir_split_host_device(a, fs, m->ntfuncs, &sp);
    out->dumps[MT_STAGE_TIR_SCHED] = print_split(a, &sp, m->ntfuncs);
    if (wanted(dump_after, "split_host_device"))
        record(a, out, "split_host_device", out->dumps[MT_STAGE_TIR_SCHED]);
    out->lowered = sp.host;
    out->nlowered = m->ntfuncs;
    out->device = sp.device;
    out->ndevice = sp.ndevice;
    out->first_device = sp.first_device;
    double t3 = now_ms();
    out->ms_frontend = t1 - t0;
    out->ms_graph = t2 - t1;
    out->ms_tir = t3 - t2;
}
