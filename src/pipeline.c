/*
 * pipeline.c -- runs the pass list (passes/registry.c) on a source.
 *
 *   parse                        source -> AST                (stage "ast")
 *   build                        AST -> graph IR              (stage "graph")
 *   the graph passes                                          (stage "graph-opt")
 *   per loop function, with the target of the device it runs on:
 *     check_bounds (with mt_compile_options.check_bounds: hand-written
 *       loop functions only)
 *     inline_producers                                        (stage "tir")
 *     the target's schedule rules (with the knobs of a tuning log:
 *       schedule/tuning.h), then lowering and cleanup
 *   split_host_device (all loop functions at once: the host functions the
 *     executor calls, and the device functions they launch)  (stage "tir-sched")
 *
 * Each loop function gets its target (mt_tfunc.target) before the TIR
 * passes: the host's for functions called on the CPU and on the test
 * device (which runs host code), the GPU's for functions called on a GPU.
 * The rules that run are that target's (mt_target_rules). The "tir-sched"
 * dump shows each function's target as T.func_attr "target".
 *
 * In debug builds, and with MT_VERIFY_TIR=1 (the test suite sets it), the
 * TIR verifier (tir/verify.h) checks every function after every TIR pass,
 * in the form the pass leaves it in (mt_pass.form); a failure is an
 * internal error naming the pass.
 *
 * The dumps of the stages "ast", "tir" and "tir-sched" are printed on
 * demand (mt_pipeline_dump, from what mt_compiled.lazy keeps): most
 * compiles never ask for them. The graph's stages are printed as they are
 * made, since the graph passes change the module in place.
 *
 * After any pass, the IR can be recorded by naming the pass in
 * mt_compile_options.dump_after ("fuse_ops,simplify"); mt_kernel_pass_dump
 * returns it.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/parser.h"
#include "graph/builder.h"
#include "passes/registry.h"
#include "passes/tir/tir_passes.h"
#include "schedule/knobs.h"
#include "schedule/leading_checks.h"
#include "schedule/trace.h"
#include "schedule/user_apply.h"
#include "schedule/user_sched.h"
#include "support/common.h"
#include "support/strbuf.h"
#include "tir/verify.h"

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
        if (!known && !mt_pass_name_known(p, n)) {
            *len = n > 64 ? 64 : (int)n;
            return p;
        }
        if (!e) break;
        p = e + 1;
    }
    return NULL;
}

/* Keeps text as the dump after pass; a pass dumped again is numbered:
 * simplify#1, simplify#2, ... */
static void record(mt_arena *a, mt_compiled *out, const char *pass, const char *text) {
    mt_pass_dump *nd = MT_NEW_ARRAY(a, mt_pass_dump, out->npass_dumps + 1);
    if (out->npass_dumps) memcpy(nd, out->pass_dumps, sizeof *nd * (size_t)out->npass_dumps);
    int runs = 1;
    for (int i = 0; i < out->npass_dumps; i++) {
        if (strcmp(nd[i].pass, pass) != 0) continue;
        if (runs == 1) nd[i].name = mt_arena_printf(a, "%s#1", pass);
        runs++;
    }
    nd[out->npass_dumps].pass = pass;
    nd[out->npass_dumps].name = runs == 1 ? pass : mt_arena_printf(a, "%s#%d", pass, runs);
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

/* What was verified last: a pass that returns a function unchanged (the
 * same pointer: passes never modify their input) in the same form needs
 * no second look. */
typedef struct verified {
    const mt_tfunc **fs; /* fs[i]: the function last verified in slot i ... */
    mt_tir_form form;    /* ... in this form (the form the functions are in now) */
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

/* The form after pass p (forms only advance). */
static mt_tir_form form_after(const mt_pass *p, mt_tir_form form) {
    return p->form > form ? p->form : form;
}

/* The target of the device a loop function runs on. */
static const mt_target_desc *target_of(const mt_pipeline_targets *t, mt_device d) {
    return d.type == MT_DEVICE_CUDA ? t->gpu : t->host;
}

typedef struct assign {
    mt_arena *arena;
    mt_gmodule *m;
    const mt_pipeline_targets *targets;
    mt_ptrmap clones; /* a function given another target -> its copy for the other one + 1 */
    MT_VEC(mt_tfunc *) made;
} assign;

/* f's copy for target t: one per function (the two targets are the host's
 * and the GPU's), named after f ("f_1": mt_gmodule_add_tfunc keeps names
 * unique). */
static mt_tfunc *clone_for(assign *as, mt_tfunc *f, const mt_target_desc *t) {
    int k = mt_ptrmap_get(&as->clones, f);
    if (k > 0) return as->made.data[k - 1];
    mt_tfunc *g = MT_NEW(as->arena, mt_tfunc);
    *g = *f;
    g->target = t;
    mt_gmodule_add_tfunc(as->arena, as->m, g);
    MT_VEC_PUSH(as->arena, &as->made, g);
    mt_ptrmap_add(as->arena, &as->clones, f, as->made.len);
    return g;
}

/* Gives each called loop function the target of its call's device; a
 * function called on devices of two targets is cloned for the second. */
static void assign_block(mt_gblock *blk, void *ctx) {
    assign *as = ctx;
    for (int i = 0; i < blk->nbindings; i++) {
        mt_gbinding *b = blk->bindings[i];
        if (b->kind != MT_CALL_TIR) continue;
        mt_device d = b->device.type ? b->device : as->m->default_device;
        const mt_target_desc *t = target_of(as->targets, d);
        if (!b->callee->target) b->callee->target = t;
        else if (b->callee->target != t) b->callee = clone_for(as, b->callee, t);
    }
}

static void assign_targets(mt_arena *a, mt_gmodule *m, const mt_pipeline_targets *t) {
    assign as;
    memset(&as, 0, sizeof as);
    as.arena = a, as.m = m, as.targets = t;
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], assign_block, &as);
    for (int i = 0; i < m->ntfuncs; i++)
        if (!m->tfuncs[i]->target) m->tfuncs[i]->target = t->host;
}

/* Does the bounds-check pass run on f: with the option, or when the front
 * end left an access of f unproven (mt_tfunc.unproven)? A GPU kernel
 * cannot check (only its emulation can): an unproven access there is
 * refused at its place, as the front end refused it before it had checks. */
static bool checked(const mt_tfunc *f, bool checks, const mt_pipeline_targets *t) {
    if (checks) return true;
    if (!f->unproven) return false;
    if (mt_tfunc_target(f)->kind == MT_TARGET_CPU || t->emulate) return true;
    mt_fail(MT_ERR_UNSUPPORTED, f->unproven_at,
            "this access is not provably inside its buffer, and a GPU kernel cannot check it at "
            "run time (--emulate can)");
}

static void run_tir_pass(mt_arena *a, const mt_pass *p, mt_tfunc **fs, int n, const char *dump_after,
                         verified *v, const bool *as_written, bool checks, const mt_pipeline_targets *t,
                         mt_compiled *out) {
    bool inliner = strcmp(p->name, "inline_producers") == 0;
    for (int i = 0; i < n; i++)
        if (!(inliner && as_written[i]) && (!p->only_check_bounds || checked(fs[i], checks, t)))
            fs[i] = p->tir(a, fs[i]);
    verify_tir(a, v, p->name, fs, n, form_after(p, v->form));
    if (wanted(dump_after, p->name)) record(a, out, p->name, print_tfuncs(a, fs, n));
}

/* Before the rules: the tuning log's knobs on the functions it has a
 * record for, and, for the tuner, each CPU function's workload. */
static void tuning_before(mt_arena *a, mt_tfunc **fs, int n, const mt_pipeline_targets *t,
                          const mt_sched_how *how, mt_compiled *out) {
    if (t->workloads) {
        out->workloads = MT_NEW_ARRAY(a, mt_workload, n > 0 ? n : 1);
        out->nworkloads = n;
    }
    for (int i = 0; i < n; i++) {
        if (how[i].origin) continue;
        fs[i] = mt_tuning_apply(a, fs[i], t->tuning);
        if (!t->workloads) continue;
        char buf[256];
        mt_workload *w = &out->workloads[i];
        w->func = fs[i]->name;
        mt_workload_key(a, fs[i], w->key);
        w->target = mt_arena_strdup(a, mt_target_str(mt_tfunc_target(fs[i]), buf, sizeof buf));
    }
}

/* The target's rules, each tried on every function (a rule leaves alone
 * what it does not match) until one takes it: a function the matmul rule
 * scheduled with primitives still has blocks, which later rules must not
 * take again. Functions of different targets take their own;
 * those a user schedule took (how[i].origin) are left alone. The tuner
 * learns which rule changed each function (out->workloads). */
/* rule on f, the bounds checks in front of its nest set aside while the
 * rule matches and put back in front of what it made (leading_checks.h) */
static mt_tfunc *apply_rule(mt_arena *a, const mt_pass *rule, mt_tfunc *f) {
    mt_tstmt **checks;
    int nc;
    mt_tfunc *bare = mt_checks_peel(a, f, &checks, &nc);
    mt_tfunc *g = rule->tir(a, bare);
    if (g == bare) return f;
    mt_tfunc *r = mt_checks_restore(a, f, g, checks, nc);
    return r ? r : f;
}

static void run_rules(mt_arena *a, mt_tfunc **fs, int n, const mt_pipeline_targets *t, const char *dump_after,
                      verified *v, mt_sched_how *how, mt_compiled *out) {
    tuning_before(a, fs, n, t, how, out);
    static const mt_target kinds[] = {MT_TARGET_CPU, MT_TARGET_CUDA};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int nr;
        const mt_pass *rules = mt_target_rules(kinds[k], &nr);
        for (int r = 0; r < nr; r++) {
            bool any = false;
            for (int i = 0; i < n; i++)
                if (mt_tfunc_target(fs[i])->kind == kinds[k] && !how[i].origin && !how[i].text) {
                    mt_tfunc *before = fs[i];
                    fs[i] = apply_rule(a, &rules[r], fs[i]);
                    if (fs[i] != before && !how[i].text) how[i].text = rules[r].name;
                    any = true;
                    if (out->workloads && fs[i] != before && !out->workloads[i].rule)
                        out->workloads[i].rule = rules[r].name;
                }
            if (!any) continue;
            verify_tir(a, v, rules[r].name, fs, n, form_after(&rules[r], v->form));
            if (wanted(dump_after, rules[r].name)) record(a, out, rules[r].name, print_tfuncs(a, fs, n));
        }
    }
}

/* f as the "tir-sched" dump shows it: a copy with its target as an
 * attribute. */
static mt_tfunc *with_target(mt_arena *a, const mt_tfunc *f) {
    char buf[256];
    mt_tfunc *shown = MT_NEW(a, mt_tfunc);
    *shown = *f;
    mt_tfunc_set_attr(a, shown, "target", mt_target_str(mt_tfunc_target(f), buf, sizeof buf));
    return shown;
}

/* What the "tir-sched" text shows: each host function followed by the
 * device functions it launches, each with its target (printed on demand:
 * mt_pipeline_dump). */
static void keep_split(mt_arena *a, const mt_tsplit *sp, int n, mt_pipeline_lazy *lazy) {
    lazy->nsched = n + sp->ndevice;
    lazy->sched = MT_NEW_ARRAY(a, mt_tfunc *, lazy->nsched > 0 ? lazy->nsched : 1);
    int k = 0;
    for (int i = 0; i < n; i++) {
        lazy->sched[k++] = with_target(a, sp->host[i]);
        for (int d = sp->first_device[i]; d < sp->first_device[i + 1]; d++)
            lazy->sched[k++] = with_target(a, sp->device[d]);
    }
}

/* Shallow copies of fs[0..n): what they are now, whatever is later done to
 * the structs (the bodies are never changed). */
static mt_tfunc **snapshot(mt_arena *a, mt_tfunc *const *fs, int n) {
    mt_tfunc **out = MT_NEW_ARRAY(a, mt_tfunc *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        out[i] = MT_NEW(a, mt_tfunc);
        *out[i] = *fs[i];
    }
    return out;
}

bool mt_pipeline_stage_lazy(mt_stage s) {
    return s == MT_STAGE_AST || s == MT_STAGE_TIR || s == MT_STAGE_TIR_SCHED;
}

const char *mt_pipeline_dump(mt_arena *a, const mt_compiled *c, mt_stage s) {
    if ((unsigned)s >= MT_STAGE_COUNT_) return NULL;
    if (c->dumps[s] || !mt_pipeline_stage_lazy(s)) return c->dumps[s];
    const mt_pipeline_lazy *l = &c->lazy;
    switch (s) {
    case MT_STAGE_AST: return l->ast ? mt_ast_print(a, l->ast) : NULL;
    case MT_STAGE_TIR: return l->tir ? print_tfuncs(a, l->tir, l->ntir) : NULL;
    case MT_STAGE_TIR_SCHED: return l->sched ? print_tfuncs(a, l->sched, l->nsched) : NULL;
    default: return NULL;
    }
}

static mt_gmodule *run_graph_passes(mt_arena *a, mt_gmodule *m, const char *dump_after,
                                    mt_compiled *out) {
    for (int i = 0; i < mt_npasses; i++) {
        const mt_pass *p = &mt_passes[i];
        if (p->kind != MT_PASS_GRAPH) continue;
        m = p->graph(a, m);
        /* the groups, before fuse_tir makes each one call */
        if (strcmp(p->name, "fuse_ops") == 0) out->dumps[MT_STAGE_DOT] = mt_gmodule_dot(a, m);
        if (wanted(dump_after, p->name)) record(a, out, p->name, mt_gmodule_print(a, m, true));
    }
    return m;
}

/* The knobs a tuning log gave f ("mr=4 parallel=0"), or NULL. */
static const char *knobs(const mt_tfunc *f) { return mt_tfunc_get_attr(f, "knobs"); }

/* A function a default rule scheduled: the rule, a tuning log's knobs,
 * and the primitives it applied as a schedule (when it is made of them). */
static void print_rule(mt_sb *sb, mt_arena *a, const mt_tfunc *f, const char *rule) {
    mt_sb_printf(sb, "# %s: the default rule %s%s%s", f->name, rule, knobs(f) ? ", knobs " : "",
                 knobs(f) ? knobs(f) : "");
    bool replayable;
    const char *text = mt_sched_trace_text(a, f, &replayable);
    if (!text && f->chosen && strcmp(f->chosen->rule, rule) == 0) { /* lowered form: its knobs */
        mt_usched u;
        mt_usched_init(&u, a, (mt_tfunc *)f);
        mt_usched_line(&u, mt_knobs_call(a, f->chosen));
        text = mt_usched_text(&u, f->name, false);
        replayable = true;
    }
    if (!text) {
        mt_sb_putc(sb, '\n');
        return;
    }
    mt_sb_printf(sb, ", as a schedule%s:\n%s", replayable ? "" : " (in part)", text);
}

/* The "schedule" dump: how each function was scheduled. */
static const char *print_how(mt_arena *a, mt_tfunc *const *fs, int n, const mt_sched_how *how) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_putc(&sb, '\n');
        if (how[i].origin) mt_sb_printf(&sb, "# %s: %s\n%s", fs[i]->name, how[i].origin, how[i].text);
        else if (how[i].text) print_rule(&sb, a, fs[i], how[i].text);
        else mt_sb_printf(&sb, "# %s: no rule applied (its loops as written)\n", fs[i]->name);
    }
    return mt_sb_str(&sb);
}

/* The user's schedules (the source's, then the callback's), then the
 * target's rules on the functions they left. */
static void schedule(mt_arena *a, const mt_ast *ast, mt_tfunc **fs, int n, const mt_compile_options *opts,
                     const mt_pipeline_targets *t, verified *v, mt_compiled *out) {
    mt_sched_how *how = MT_NEW_ARRAY(a, mt_sched_how, n + 1);
    mt_apply_source_schedules(a, ast, fs, n, how);
    if (opts && opts->schedule) mt_apply_callback_schedules(a, opts->schedule, opts->schedule_user, fs, n, how);
    verify_tir(a, v, "user schedules", fs, n, MT_TIR_BLOCK); /* whether or not a rule runs after */
    run_rules(a, fs, n, t, opts ? opts->dump_after : NULL, v, how, out);
    out->dumps[MT_STAGE_SCHEDULE] = print_how(a, fs, n, how);
}

static void run_tir_passes(mt_arena *a, const mt_ast *ast, mt_tfunc **fs, int n,
                           const mt_compile_options *opts, const mt_pipeline_targets *t, mt_compiled *out) {
    const char *dump_after = opts ? opts->dump_after : NULL;
    bool checks = opts && opts->check_bounds;
    verified v = {NULL, MT_TIR_BLOCK};
    verify_tir(a, &v, "fuse_tir", fs, n, MT_TIR_BLOCK); /* what the graph passes made */
    /* loop functions of the source that its schedules name: the schedule
     * sees them as written */
    bool *as_written = MT_NEW_ARRAY(a, bool, n + 1);
    for (int i = 0; i < n; i++) as_written[i] = fs[i]->hand_written && mt_source_schedules_name(ast, fs[i]);
    for (int i = 0; i < mt_npasses; i++) {
        const mt_pass *p = &mt_passes[i];
        if (p->kind == MT_PASS_RULES) schedule(a, ast, fs, n, opts, t, &v, out);
        else if (p->kind == MT_PASS_TIR) run_tir_pass(a, p, fs, n, dump_after, &v, as_written, checks, t, out);
        if (p->kind == MT_PASS_TIR && strcmp(p->name, "inline_producers") == 0) {
            out->lazy.tir = snapshot(a, fs, n);
            out->lazy.ntir = n;
        }
    }
}

/* split_host_device on every function, its results verified. */
static void split(mt_arena *a, mt_tfunc *const *fs, int n, mt_tsplit *sp) {
    mt_tir_split_host_device(a, fs, n, sp);
    verified vh = {NULL, MT_TIR_FLAT}, vd = {NULL, MT_TIR_FLAT};
    verify_tir(a, &vh, "split_host_device", sp->host, n, MT_TIR_FLAT);
    verify_tir(a, &vd, "split_host_device", sp->device, sp->ndevice, MT_TIR_FLAT);
}

static void finish(mt_compiled *out, double t0, double t1, double t2) {
    double t3 = now_ms();
    out->ms_frontend = t1 - t0;
    out->ms_graph = t2 - t1;
    out->ms_tir = t3 - t2;
}

void mt_pipeline_run(mt_arena *a, const char *src, size_t len, const mt_compile_options *opts,
                     const mt_pipeline_targets *targets, mt_compiled *out) {
    memset(out, 0, sizeof *out);
    const char *dump_after = opts ? opts->dump_after : NULL;
    double t0 = now_ms();

    mt_ast *ast = mt_parse(a, src, len, NULL);
    out->lazy.ast = ast;
    if (wanted(dump_after, "parse")) {
        out->dumps[MT_STAGE_AST] = mt_pipeline_dump(a, out, MT_STAGE_AST);
        record(a, out, "parse", out->dumps[MT_STAGE_AST]);
    }

    mt_device host = {MT_DEVICE_CPU, 0}, none = {0, 0};
    mt_device gpu = targets->gpu ? (mt_device){MT_DEVICE_CUDA, 0}
                    : targets->host->test_device ? (mt_device){MT_DEVICE_TEST, 0} : none;
    mt_device dflt = targets->gpu ? gpu : host; /* target cuda: the program runs on the GPU */
    mt_build_options bo = {opts ? opts->entry : NULL, opts ? opts->unroll_threshold : 16, dflt, gpu,
                           targets->externs, targets->nexterns, targets->bound, targets->nbound};
    mt_gmodule *m = mt_build_graph(a, ast, &bo);
    m->default_device = dflt;
    out->dumps[MT_STAGE_GRAPH] = mt_gmodule_print(a, m, false);
    if (wanted(dump_after, "build")) record(a, out, "build", out->dumps[MT_STAGE_GRAPH]);
    double t1 = now_ms();

    m = run_graph_passes(a, m, dump_after, out);
    out->dumps[MT_STAGE_GRAPH_OPT] = mt_gmodule_print(a, m, false);
    out->module = m;
    out->entry = m->funcs[0];
    double t2 = now_ms();

    assign_targets(a, m, targets);
    mt_tfunc **fs = MT_NEW_ARRAY(a, mt_tfunc *, m->ntfuncs > 0 ? m->ntfuncs : 1);
    for (int i = 0; i < m->ntfuncs; i++) fs[i] = m->tfuncs[i];
    run_tir_passes(a, ast, fs, m->ntfuncs, opts, targets, out);
    mt_tsplit sp;
    split(a, fs, m->ntfuncs, &sp);
    keep_split(a, &sp, m->ntfuncs, &out->lazy);
    if (wanted(dump_after, "split_host_device")) {
        out->dumps[MT_STAGE_TIR_SCHED] = mt_pipeline_dump(a, out, MT_STAGE_TIR_SCHED);
        record(a, out, "split_host_device", out->dumps[MT_STAGE_TIR_SCHED]);
    }
    out->nlowered = m->ntfuncs;
    if (targets->gpu) {
        out->gpu_host = sp.host;
        out->gpu_device = sp.device;
        out->ngpu_device = sp.ndevice;
        if (!targets->emulate) {
            finish(out, t0, t1, t2);
            return;
        }
        for (int i = 0; i < m->ntfuncs; i++) fs[i] = mt_tir_emulate_gpu(a, fs[i], targets->host);
        verified ve = {NULL, MT_TIR_FLAT};
        verify_tir(a, &ve, "emulate_gpu", fs, m->ntfuncs, MT_TIR_FLAT);
        split(a, fs, m->ntfuncs, &sp);
    }
    out->lowered = sp.host;
    out->device = sp.device;
    out->ndevice = sp.ndevice;
    out->first_device = sp.first_device;
    finish(out, t0, t1, t2);
}
