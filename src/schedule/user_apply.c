/*
 * user_apply.c -- the source's schedules, each applied to the loop
 * functions it names (sched_from_ast.h, mt_apply_source_schedules).
 *
 * `@T.schedule(mm)` names a loop function of the source: it applies to the
 * functions made from it (one per distinct set of symbolic-dim bindings of
 * its calls, named mm, mm_1, ...). `@T.schedule("fused_add")` names a
 * kernel of the dumps exactly. A string that names no kernel of the program
 * is an error (a typo would otherwise go unnoticed); a loop function that
 * the program does not call is not.
 */
#include <ctype.h>
#include <string.h>

#include "schedule/user_apply.h"

#include "schedule/sched_from_ast.h"
#include "schedule/user_api.h"
#include "support/common.h"
#include "tir/from_ast.h"

static const mt_ast *find_prim_func(const mt_ast *module, const char *name) {
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        if (d->kind == AST_FUNCDEF && strcmp(d->name, name) == 0) return d;
    }
    return NULL;
}

static const char *kernel_names(mt_arena *a, mt_tfunc *const *fs, int n) {
    const char *s = "";
    for (int i = 0; i < n; i++) s = mt_arena_printf(a, "%s%s%s", s, i ? ", " : "", fs[i]->name);
    return *s ? s : "none";
}

typedef struct has_thread {
    bool found;
} has_thread;

static void thread_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    has_thread *h = v->ctx;
    if (s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD) h->found = true;
    if (!h->found) mt_tvisit_stmt_children(v, s);
}


static bool binds_threads(const mt_tfunc *f) {
    has_thread h = {false};
    mt_tvisitor v = {mt_tvisit_no_expr, thread_stmt, &h};
    if (f->body) mt_tvisit_stmt(&v, f->body);
    return h.found;
}

/* Does a schedule whose decorator's argument is arg name kernel f? By
 * name: f is made from that loop function of the source (one function
 * per binding of its symbolic dims: its place is the def's); by string:
 * f's name is exactly the string. */
static bool names(const mt_ast *module, const mt_ast *arg, const mt_tfunc *f) {
    if (arg->kind == AST_STR) return strcmp(f->name, arg->str) == 0;
    const mt_ast *d = find_prim_func(module, arg->name);
    return d && f->hand_written && f->loc.line == d->loc.line && f->loc.col == d->loc.col;
}

static void check_target(const mt_ast *module, const mt_ast *arg) {
    if (arg->kind != AST_NAME) return;
    const mt_ast *d = find_prim_func(module, arg->name);
    if (!d || !mt_ast_is_prim_func(d))
        mt_fail(MT_ERR_NAME, arg->loc, "'%s' is not a loop function (@T.prim_func) of this source", arg->name);
}

static void apply_one(mt_arena *a, const mt_ast *module, const mt_ast *def, mt_tfunc **fs, int n,
                      mt_sched_how *how, const mt_ast **by) {
    const mt_ast *arg = mt_schedule_decorator_arg(def);
    check_target(module, arg);
    bool any = false;
    for (int i = 0; i < n; i++) {
        if (!names(module, arg, fs[i])) continue;
        any = true;
        if (by[i])
            mt_fail(MT_ERR_INVALID_ARG, arg->loc, "a second schedule for '%s' (the first is at line %d)",
                    fs[i]->name, by[i]->loc.line);
        by[i] = def;
        fs[i] = mt_schedule_from_ast(a, fs[i], def, arg, &how[i].text);
        how[i].origin = "the source's schedule";
        if (mt_tfunc_target(fs[i])->kind == MT_TARGET_CUDA && !binds_threads(fs[i]))
            mt_fail(MT_ERR_INVALID_ARG, def->loc,
                    "kernel '%s' runs on the GPU: its schedule must bind loops to blockIdx and threadIdx "
                    "(sch.bind)", fs[i]->name);
    }
    if (!any && arg->kind == AST_STR)
        mt_fail(MT_ERR_NAME, arg->loc, "no kernel named '%s' in this program (its kernels: %s)", arg->str,
                kernel_names(a, fs, n));
}

bool mt_source_schedules_name(const mt_ast *module, const mt_tfunc *f) {
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        const mt_ast *arg = d->kind == AST_FUNCDEF ? mt_schedule_decorator_arg(d) : NULL;
        if (arg && arg->kind == AST_NAME && names(module, arg, f)) return true;
    }
    return false;
}

void mt_apply_source_schedules(mt_arena *a, const mt_ast *module, mt_tfunc **fs, int n, mt_sched_how *how) {
    const mt_ast **by = MT_NEW_ARRAY(a, const mt_ast *, n + 1);
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        if (d->kind == AST_FUNCDEF && mt_schedule_decorator_arg(d)) apply_one(a, module, d, fs, n, how, by);
    }
}

void mt_apply_callback_schedules(mt_arena *a, mt_schedule_fn fn, void *user, mt_tfunc **fs, int n,
                                 mt_sched_how *how) {
    for (int i = 0; i < n; i++) {
        if (how[i].origin) continue;
        mt_schedule sch;
        memset(&sch, 0, sizeof sch);
        mt_usched_init(&sch.u, a, fs[i]);
        mt_status st = fn(&sch, user);
        if (sch.broken)
            mt_fail(MT_ERR_INTERNAL, MT_NOLOC, "a schedule primitive failed on kernel '%s': %s", fs[i]->name,
                    sch.msg);
        if (st != MT_OK) /* the callback's own status, when it is a user error */
            mt_fail(st > MT_OK && st < MT_ERR_INTERNAL ? st : MT_ERR_INVALID_ARG, MT_NOLOC,
                    "the schedule callback failed on kernel '%s' (it returned %s)%s%s", fs[i]->name,
                    mt_status_str(st), sch.u.error ? "; the last refusal: " : "", sch.u.error ? sch.u.error : "");
        if (sch.u.s.func == fs[i]) continue; /* nothing applied: the rules take it */
        fs[i] = sch.u.s.func;
        how[i].origin = "the schedule callback";
        how[i].text = mt_usched_text(&sch.u, fs[i]->name, false);
        if (mt_tfunc_target(fs[i])->kind == MT_TARGET_CUDA && !binds_threads(fs[i]))
            mt_fail(MT_ERR_INVALID_ARG, MT_NOLOC,
                    "kernel '%s' runs on the GPU: the schedule callback must bind loops to blockIdx and "
                    "threadIdx (mt_schedule_bind)", fs[i]->name);
    }
}
