/*
 * user_api.c -- the public mt_schedule_* functions (minitriton.h, "User
 * schedules from C"): user_sched.h's operations behind the C API.
 *
 * They run inside the compile's error frame, called from the user's
 * callback; each opens its own frame so that an internal error in a
 * primitive returns MT_ERR_INTERNAL to the callback instead of unwinding
 * through the caller's C frames.
 */
#include "schedule/user_api.h"

#include <stdio.h>
#include <string.h>

#include "frontend/parser.h"
#include "schedule/knobs.h"
#include "schedule/sched_from_ast.h"
#include "support/common.h"

/* Runs op; a refusal's reason is in sch's error. An error raised inside
 * (out of memory, an internal error) is caught here, not unwound through
 * the caller's frames: it marks sch broken (the kernel may be half
 * transformed), and the compile fails after the callback returns. */
#define SCH_RUN(sch, op)                                                             \
    do {                                                                            \
        if (!(sch)) return MT_ERR_INVALID_ARG;                                      \
        if ((sch)->broken) return MT_ERR_INTERNAL;                                  \
        mt_errframe fr_;                                                            \
        bool ok_ = false;                                                           \
        if (MT_TRY(&fr_)) {                                                         \
            ok_ = (op);                                                             \
            mt_err_pop(&fr_);                                                       \
        } else {                                                                    \
            mt_err_pop(&fr_);                                                       \
            snprintf((sch)->msg, sizeof (sch)->msg, "%s", fr_.msg);                 \
            (sch)->u.error = (sch)->msg;                                            \
            (sch)->broken = true;                                                   \
            return fr_.status;                                                      \
        }                                                                           \
        return ok_ ? MT_OK : MT_ERR_INVALID_ARG;                                    \
    } while (0)

/* After mt_schedule_apply_rule no primitive applies: the function is in
 * lowered form. */
static mt_status lowered(mt_schedule *sch) {
    sch->u.error = mt_arena_printf(sch->u.s.arena, "rule %s has scheduled the kernel already (apply_rule is its "
                                   "schedule's last step)", sch->u.lowered);
    return MT_ERR_INVALID_ARG;
}

/* SCH_RUN for a primitive: refused after apply_rule. */
#define SCH_PRIM(sch, op)                                               \
    do {                                                                \
        if ((sch) && !(sch)->broken && (sch)->u.lowered) return lowered(sch); \
        SCH_RUN(sch, op);                                               \
    } while (0)

static bool null_arg(mt_schedule *sch, const char *fn) {
    sch->u.error = mt_arena_printf(sch->u.s.arena, "%s: an output pointer is NULL", fn);
    return false;
}

const char *mt_schedule_kernel_name(const mt_schedule *sch) { return sch ? sch->u.s.func->name : NULL; }
const char *mt_schedule_error(const mt_schedule *sch) { return sch ? sch->u.error : NULL; }
static bool trace_text(mt_schedule *sch, const char **out) {
    *out = mt_usched_text(&sch->u, sch->u.s.func->name, false);
    return true;
}

static mt_status run_trace(mt_schedule *sch, const char **out) { SCH_RUN(sch, trace_text(sch, out)); }

const char *mt_schedule_trace(mt_schedule *sch) {
    const char *text = NULL;
    return run_trace(sch, &text) == MT_OK ? text : NULL;
}

mt_status mt_schedule_get_block(mt_schedule *sch, const char *name, int *block) {
    SCH_PRIM(sch, !name || !block ? null_arg(sch, "get_block") : mt_usched_get_block(&sch->u, name, block));
}

static bool get_loops(mt_schedule *sch, int block, int *loops, int max, int *n) {
    int h[MT_USCHED_MAX], k;
    if (!loops || !n) return null_arg(sch, "get_loops");
    if (!mt_usched_get_loops(&sch->u, block, h, &k)) return false;
    if (k > max) {
        sch->u.error = mt_arena_printf(sch->u.s.arena, "get_loops: the block is under %d loops, more than max %d", k, max);
        return false;
    }
    memcpy(loops, h, sizeof h[0] * (size_t)k);
    *n = k;
    return true;
}

mt_status mt_schedule_get_loops(mt_schedule *sch, int block, int *loops, int max, int *n) {
    SCH_PRIM(sch, get_loops(sch, block, loops, max, n));
}

mt_status mt_schedule_split(mt_schedule *sch, int loop, const int64_t *factors, int nfactors, int *out) {
    SCH_PRIM(sch, !factors || !out ? null_arg(sch, "split") : mt_usched_split(&sch->u, loop, factors, nfactors, out));
}

mt_status mt_schedule_fuse(mt_schedule *sch, const int *loops, int n, int *fused) {
    SCH_PRIM(sch, !loops || !fused ? null_arg(sch, "fuse") : mt_usched_fuse(&sch->u, loops, n, fused));
}

mt_status mt_schedule_reorder(mt_schedule *sch, const int *loops, int n) {
    SCH_PRIM(sch, !loops ? null_arg(sch, "reorder") : mt_usched_reorder(&sch->u, loops, n));
}

mt_status mt_schedule_parallel(mt_schedule *sch, int loop) { SCH_PRIM(sch, mt_usched_parallel(&sch->u, loop)); }
mt_status mt_schedule_vectorize(mt_schedule *sch, int loop) { SCH_PRIM(sch, mt_usched_vectorize(&sch->u, loop)); }
mt_status mt_schedule_unroll(mt_schedule *sch, int loop) { SCH_PRIM(sch, mt_usched_unroll(&sch->u, loop)); }

mt_status mt_schedule_bind(mt_schedule *sch, int loop, const char *thread_axis) {
    SCH_PRIM(sch, !thread_axis ? null_arg(sch, "bind") : mt_usched_bind(&sch->u, loop, thread_axis));
}

mt_status mt_schedule_compute_at(mt_schedule *sch, int block, int loop) {
    SCH_PRIM(sch, mt_usched_compute_at(&sch->u, block, loop));
}

mt_status mt_schedule_compute_inline(mt_schedule *sch, int block) {
    SCH_PRIM(sch, mt_usched_compute_inline(&sch->u, block));
}

mt_status mt_schedule_use_fma(mt_schedule *sch, int block) {
    SCH_PRIM(sch, mt_usched_use_fma(&sch->u, block));
}

mt_status mt_schedule_cache_write(mt_schedule *sch, int block, int index, const char *scope, int *out) {
    SCH_PRIM(sch, !out ? null_arg(sch, "cache_write") : mt_usched_cache_write(&sch->u, block, index, scope, out));
}

mt_status mt_schedule_reverse_compute_at(mt_schedule *sch, int block, int loop) {
    SCH_PRIM(sch, mt_usched_reverse_compute_at(&sch->u, block, loop));
}

mt_status mt_schedule_reverse_compute_inline(mt_schedule *sch, int block) {
    SCH_PRIM(sch, mt_usched_reverse_compute_inline(&sch->u, block));
}

mt_status mt_schedule_cache_read(mt_schedule *sch, int block, int index, const char *scope, int *out) {
    SCH_PRIM(sch, !out ? null_arg(sch, "cache_read") : mt_usched_cache_read(&sch->u, block, index, scope, out));
}

mt_status mt_schedule_decompose_reduction(mt_schedule *sch, int block, int loop, int *init) {
    SCH_PRIM(sch, !init ? null_arg(sch, "decompose_reduction")
                       : mt_usched_decompose_reduction(&sch->u, block, loop, init));
}

mt_status mt_schedule_rfactor(mt_schedule *sch, const int *loops, int n, int *rf) {
    SCH_PRIM(sch, !loops || !rf ? null_arg(sch, "rfactor") : mt_usched_rfactor(&sch->u, loops, n, rf));
}

/* The index map written as a lambda ("lambda k, j: (j // 16, k, j % 16)"),
 * parsed as a source line; NULL with the reason in sch's error. */
static mt_index_map *parse_map(mt_schedule *sch, const char *text) {
    mt_arena *a = sch->u.s.arena;
    mt_index_map *volatile m = NULL;
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        const char *src = mt_arena_strdup(a, text);
        mt_ast *mod = mt_parse(a, src, strlen(src), NULL);
        if (mod->body.len != 1 || mod->body.data[0]->kind != AST_EXPR_STMT ||
            mod->body.data[0]->lhs->kind != AST_LAMBDA)
            mt_fail(MT_ERR_TYPE, MT_NOLOC, "the index map is one lambda, like \"lambda k, j: (j // 16, k, j %% 16)\"");
        m = mt_index_map_from_ast(a, mod->body.data[0]->lhs);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        sch->u.error = fr.loc.line ? mt_arena_printf(a, "transform_layout: index map, column %d: %s", fr.loc.col, fr.msg)
                                   : mt_arena_printf(a, "transform_layout: %s", fr.msg);
    }
    return m;
}

static bool transform_layout(mt_schedule *sch, int block, const char *buffer, const char *index_map) {
    if (!buffer || !index_map) return null_arg(sch, "transform_layout");
    mt_index_map *m = parse_map(sch, index_map);
    return m && mt_usched_transform_layout(&sch->u, block, mt_arena_strdup(sch->u.s.arena, buffer), 'r', 0, m);
}

mt_status mt_schedule_transform_layout(mt_schedule *sch, int block, const char *buffer, const char *index_map) {
    SCH_PRIM(sch, transform_layout(sch, block, buffer, index_map));
}

static bool apply_rule(mt_schedule *sch, const char *rule, const char *const *names, const int64_t *values, int n) {
    if (!rule || (n > 0 && (!names || !values)) || n < 0) return null_arg(sch, "apply_rule");
    mt_knobs k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < n; i++) {
        if (!names[i]) return null_arg(sch, "apply_rule");
        for (int j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0) {
                sch->u.error = mt_arena_printf(sch->u.s.arena, "apply_rule: knob '%s' given twice", names[i]);
                return false;
            }
        if (!mt_knobs_set(&k, mt_arena_strdup(sch->u.s.arena, names[i]), values[i])) {
            sch->u.error = mt_arena_printf(sch->u.s.arena, "apply_rule: at most %d knobs", MT_KNOBS_MAX);
            return false;
        }
    }
    return mt_usched_apply_rule(&sch->u, mt_arena_strdup(sch->u.s.arena, rule), &k);
}

mt_status mt_schedule_apply_rule(mt_schedule *sch, const char *rule, const char *const *knob_names,
                                 const int64_t *knob_values, int nknobs) {
    SCH_RUN(sch, apply_rule(sch, rule, knob_names, knob_values, nknobs));
}
