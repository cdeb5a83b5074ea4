/*
 * primitives_trace.c -- the public schedule primitives (primitives.h):
 * each runs its implementation (the *_do functions of primitives*.c) and,
 * when it succeeds, appends a step to the trace of the function it made
 * (trace.h).
 *
 * In a user's schedule, a primitive that moves or makes blocks, or
 * reorders loops, is also refused when it leaves a parallel or
 * thread-bound loop whose iterations may touch the same elements of a
 * buffer (primitives_race.c): parallel and bind check the loop as it is
 * when they run, and a producer moved under it later (compute_at after
 * parallel), or a serial loop it leaves inside (reorder), could make
 * neighbouring iterations overlap.
 */
#include <string.h>

#include "schedule/block_util.h"
#include "schedule/trace.h"
#include "support/common.h"

static bool concurrent_loop(const mt_tstmt *s) {
    return s->kind == TS_FOR && (s->for_kind == MT_FOR_PARALLEL || s->for_kind == MT_FOR_THREAD);
}

static mt_blk_stmts concurrent_loops(mt_arena *a, const mt_tfunc *f) {
    return mt_blk_stmts_under(a, f->body, concurrent_loop);
}

/* The buffers that loop l (by its variable) of before, one of its
 * concurrent loops, could not be shown to split among its iterations
 * already (a loop function's own T.parallel, say): not prim's doing.
 * Found on before (s->func for the while). */
static mt_blk_bufs unshown_before(mt_sched *s, const mt_tfunc *before, const mt_tstmt *l) {
    mt_blk_stmts old = concurrent_loops(s->arena, before);
    mt_tfunc *after = s->func;
    mt_blk_bufs bufs = {0};
    s->func = (mt_tfunc *)before;
    for (int i = 0; i < old.len; i++)
        if (old.data[i]->var == l->var) bufs = mt_sched_unshown_buffers(s, old.data[i]);
    s->func = after;
    return bufs;
}

/* After prim (a user's), every loop of s->func whose iterations run at
 * once still touches disjoint elements of each buffer written under it,
 * but those it could not be shown to before prim either; else s->func is
 * before again and prim is refused. */
static bool still_disjoint(mt_sched *s, const char *prim, const mt_tfunc *before) {
    if (!s->user) return true;
    const char *last = s->error; /* the last refusal, kept when prim stands */
    mt_blk_stmts loops = concurrent_loops(s->arena, s->func);
    for (int i = 0; i < loops.len; i++) {
        const mt_tstmt *l = loops.data[i];
        const char *what = mt_arena_printf(s->arena, "%s (loop '%s' is %s)", prim, l->var->name,
                                           l->for_kind == MT_FOR_PARALLEL ? "parallel"
                                           : l->thread_tag                ? l->thread_tag
                                                                          : "thread-bound");
        if (mt_sched_iterations_disjoint(s, what, l, NULL, NULL)) continue;
        mt_blk_bufs old = unshown_before(s, before, l);
        if (old.len && mt_sched_iterations_disjoint(s, what, l, NULL, &old)) continue;
        s->func = (mt_tfunc *)before;
        return false;
    }
    s->error = last;
    return true;
}

static mt_sched_step *new_step(mt_sched *s, const char *prim, const mt_tfunc *before) {
    mt_sched_step *st = MT_NEW(s->arena, mt_sched_step);
    memset(st, 0, sizeof *st);
    st->prim = prim;
    st->before = before;
    st->prev = before->trace;
    return st;
}

/* s->func, a copy carrying the step. */
static bool push(mt_sched *s, mt_sched_step *st) {
    mt_tfunc *g = MT_NEW(s->arena, mt_tfunc);
    *g = *s->func;
    g->trace = st;
    s->func = g;
    return true;
}

static bool loop_step(mt_sched *s, const char *prim, const mt_tfunc *before, mt_tvar *loop) {
    mt_sched_step *st = new_step(s, prim, before);
    st->loops[st->nloops++] = loop;
    return push(s, st);
}

void mt_sched_trace_note(mt_sched *s, const char *what) {
    mt_sched_step *st = new_step(s, NULL, s->func);
    st->note = what;
    push(s, st);
}

bool mt_sched_split(mt_sched *s, mt_tvar *loop, mt_texpr *factor, mt_tvar **outer, mt_tvar **inner) {
    const mt_tfunc *before = s->func;
    mt_tvar *o, *i;
    if (!mt_sched_split_do(s, loop, factor, &o, &i) || !still_disjoint(s, "split", before)) return false;
    mt_sched_step *st = new_step(s, "split", before);
    st->loops[st->nloops++] = loop;
    st->factor = factor;
    st->outs[0] = o, st->outs[1] = i, st->nouts = 2;
    if (outer) *outer = o;
    if (inner) *inner = i;
    return push(s, st);
}

bool mt_sched_fuse(mt_sched *s, mt_tvar *outer, mt_tvar *inner, mt_tvar **fused) {
    const mt_tfunc *before = s->func;
    mt_tvar *f;
    if (!mt_sched_fuse_do(s, outer, inner, &f) || !still_disjoint(s, "fuse", before)) return false;
    mt_sched_step *st = new_step(s, "fuse", before);
    st->loops[0] = outer, st->loops[1] = inner, st->nloops = 2;
    st->outs[0] = f, st->nouts = 1;
    if (fused) *fused = f;
    return push(s, st);
}

bool mt_sched_reorder(mt_sched *s, mt_tvar *outer, mt_tvar *inner) {
    const mt_tfunc *before = s->func;
    if (!mt_sched_reorder_do(s, outer, inner) || !still_disjoint(s, "reorder", before)) return false;
    mt_sched_step *st = new_step(s, "reorder", before);
    st->loops[0] = outer, st->loops[1] = inner, st->nloops = 2;
    return push(s, st);
}

bool mt_sched_parallel(mt_sched *s, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    return mt_sched_parallel_do(s, loop) && loop_step(s, "parallel", before, loop);
}

bool mt_sched_vectorize(mt_sched *s, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    return mt_sched_vectorize_do(s, loop) && loop_step(s, "vectorize", before, loop);
}

bool mt_sched_unroll(mt_sched *s, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    return mt_sched_unroll_do(s, loop) && loop_step(s, "unroll", before, loop);
}

bool mt_sched_bind(mt_sched *s, mt_tvar *loop, const char *tag, int64_t threads) {
    const mt_tfunc *before = s->func;
    if (!mt_sched_bind_do(s, loop, tag, threads)) return false;
    mt_sched_step *st = new_step(s, "bind", before);
    st->loops[st->nloops++] = loop;
    st->str = tag;
    st->threads = threads;
    return push(s, st);
}

static bool block_step(mt_sched *s, const char *prim, const mt_tfunc *before, const char *block,
                       mt_tvar *loop, const char *made) {
    if (strcmp(prim, "compute_inline") && strcmp(prim, "use_fma") && !still_disjoint(s, prim, before)) return false;
    mt_sched_step *st = new_step(s, prim, before);
    st->block = block;
    if (loop) st->loops[st->nloops++] = loop;
    st->made = made;
    if (!strcmp(prim, "decompose_reduction")) st->str = s->renamed; /* its update block */
    return push(s, st);
}

bool mt_sched_compute_inline(mt_sched *s, const char *block) {
    const mt_tfunc *before = s->func;
    return mt_sched_compute_inline_do(s, block) && block_step(s, "compute_inline", before, block, NULL, NULL);
}

bool mt_sched_use_fma(mt_sched *s, const char *block) {
    const mt_tfunc *before = s->func;
    return mt_sched_use_fma_do(s, block) && block_step(s, "use_fma", before, block, NULL, NULL);
}

bool mt_sched_compute_at(mt_sched *s, const char *block, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    return mt_sched_compute_at_do(s, block, loop) && block_step(s, "compute_at", before, block, loop, NULL);
}

bool mt_sched_reverse_compute_inline(mt_sched *s, const char *block) {
    const mt_tfunc *before = s->func;
    return mt_sched_reverse_compute_inline_do(s, block) &&
           block_step(s, "reverse_compute_inline", before, block, NULL, NULL);
}

bool mt_sched_reverse_compute_at(mt_sched *s, const char *block, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    return mt_sched_reverse_compute_at_do(s, block, loop) &&
           block_step(s, "reverse_compute_at", before, block, loop, NULL);
}

bool mt_sched_cache_read(mt_sched *s, const char *block, const char *buffer, mt_scope scope,
                         const char **cache_block) {
    const mt_tfunc *before = s->func;
    const char *made = NULL;
    if (!mt_sched_cache_read_do(s, block, buffer, scope, &made) || !still_disjoint(s, "cache_read", before))
        return false;
    if (cache_block) *cache_block = made;
    mt_sched_step *st = new_step(s, "cache_read", before);
    st->block = block, st->str = buffer, st->scope = scope, st->made = made;
    return push(s, st);
}

bool mt_sched_cache_write(mt_sched *s, const char *block, mt_scope scope, const char **cache_block) {
    const mt_tfunc *before = s->func;
    const char *made = NULL;
    if (!mt_sched_cache_write_do(s, block, scope, &made) || !still_disjoint(s, "cache_write", before))
        return false;
    if (cache_block) *cache_block = made;
    mt_sched_step *st = new_step(s, "cache_write", before);
    st->block = block, st->scope = scope, st->made = made;
    return push(s, st);
}

bool mt_sched_decompose_reduction(mt_sched *s, const char *block, mt_tvar *loop) {
    const mt_tfunc *before = s->func;
    s->made = s->renamed = NULL;
    return mt_sched_decompose_reduction_do(s, block, loop) &&
           block_step(s, "decompose_reduction", before, block, loop, s->made);
}

bool mt_sched_rfactor(mt_sched *s, const char *block, mt_tvar *const *loops, int nloops) {
    const mt_tfunc *before = s->func;
    if (nloops > MT_STEP_MAX_LOOPS)
        return mt_sched_refuse(s, "rfactor: %d loops, more than %d", nloops, MT_STEP_MAX_LOOPS);
    s->made = NULL;
    if (!mt_sched_rfactor_do(s, block, loops, nloops) || !still_disjoint(s, "rfactor", before)) return false;
    mt_sched_step *st = new_step(s, "rfactor", before);
    st->block = block;
    for (int i = 0; i < nloops; i++) st->loops[st->nloops++] = loops[i];
    st->made = s->made;
    return push(s, st);
}

bool mt_sched_transform_layout(mt_sched *s, const char *block, const char *buffer, const mt_index_map *map) {
    const mt_tfunc *before = s->func;
    if (!mt_sched_transform_layout_do(s, block, buffer, map) || !still_disjoint(s, "transform_layout", before))
        return false;
    mt_sched_step *st = new_step(s, "transform_layout", before);
    st->block = block, st->str = buffer, st->map = map;
    return push(s, st);
}

int mt_sched_trace_steps(const mt_tfunc *f, const mt_sched_step **out, int max) {
    int n = 0;
    for (const mt_sched_step *st = f->trace; st; st = st->prev) n++;
    if (n > max) return -1;
    int i = n;
    for (const mt_sched_step *st = f->trace; st; st = st->prev) out[--i] = st;
    return n;
}
