/*
 * fuse_tir.c -- one loop function per fusion group.
 *
 * For a group (fuse_ops.c) with members m1..mk in order, the new function
 * fused_<op1>_<op2>_... takes the group's external inputs (values used by a
 * member but made outside the group, in order of first use) and writes its
 * outputs (member values used after the group or returned). Its body is the
 * members' bodies in order, with each member's buffers renamed to the group's:
 * an external input or output becomes a parameter, an intermediate becomes a
 * function-level alloc. Symbolic dims are matched by name.
 *
 *   out = add(a, b); out_1 = add(out, a)
 *     ==>  out_1 = R.call_tir(cls.fused_add_add, (a, b), ...)
 *
 * The intermediates are then inlined by the TIR pass inline_producers, which
 * turns this sequence of loop nests into one.
 *
 * The fused call takes the place of the group's root (its last binding): by
 * fuse_ops' rule, no binding outside the group between the members uses a
 * member's value.
 */
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

typedef struct bufmap {
    mt_tbuffer *from[256];
    mt_tbuffer *to[256];
    int n;
} bufmap;

static mt_tbuffer *map_buf(const bufmap *bm, mt_tbuffer *b) {
    for (int i = 0; i < bm->n; i++)
        if (bm->from[i] == b) return bm->to[i];
    return b;
}

static mt_texpr *remap_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind == TE_LOAD) {
        mt_tbuffer *nb = map_buf(m->ctx, r->buf);
        if (nb != r->buf) {
            r = mt_te_copy(m->arena, r);
            r->buf = nb;
        }
    }
    return r;
}

static mt_tregion *remap_regions(mt_arena *a, const bufmap *bm, const mt_tregion *rs, int n) {
    mt_tregion *out = MT_NEW_ARRAY(a, mt_tregion, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        out[i] = rs[i];
        out[i].buf = map_buf(bm, rs[i].buf);
    }
    return out;
}

static mt_tstmt *remap_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind == TS_STORE) {
        mt_tbuffer *nb = map_buf(m->ctx, r->buf);
        if (nb != r->buf) {
            r = mt_ts_copy(m->arena, r);
            r->buf = nb;
        }
    } else if (r->kind == TS_BLOCK) {
        r = mt_ts_copy(m->arena, r);
        r->reads = remap_regions(m->arena, m->ctx, r->reads, r->nreads);
        r->writes = remap_regions(m->arena, m->ctx, r->writes, r->nwrites);
    }
    return r;
}

/* ---- variables of their own for a second call ------------------------------ */

/* Two calls of one loop function in a group share its body: its loop, let
 * and iteration variables would be bound twice in the fused function (a
 * schedule rule found "2 loops over 'i'"). The later member's body gets
 * variables of its own, one new variable per old one. */
typedef struct renew {
    MT_VEC(mt_tvar *) from;
    MT_VEC(mt_tvar *) to;
} renew;

static mt_tvar *renewed(mt_arena *a, renew *r, mt_tvar *v) {
    for (int i = 0; i < r->from.len; i++)
        if (r->from.data[i] == v) return r->to.data[i];
    mt_tvar *n = mt_tvar_new(a, v->name, v->dtype);
    MT_VEC_PUSH(a, &r->from, v);
    MT_VEC_PUSH(a, &r->to, n);
    return n;
}

static mt_texpr *renew_expr(mt_tmutator *m, mt_texpr *e) {
    renew *r = m->ctx;
    if (e->kind != TE_VAR) return mt_tmutate_expr_children(m, e);
    for (int i = 0; i < r->from.len; i++)
        if (r->from.data[i] == e->var) return mt_te_var(m->arena, r->to.data[i]);
    return e; /* a symbolic dim */
}

static mt_tstmt *renew_stmt(mt_tmutator *m, mt_tstmt *s) {
    renew *r = m->ctx;
    if (s->kind == TS_FOR || s->kind == TS_LET) renewed(m->arena, r, s->var); /* before its uses */
    for (int i = 0; s->kind == TS_BLOCK && i < s->niters; i++) renewed(m->arena, r, s->iters[i].var);
    mt_tstmt *c = mt_tmutate_stmt_children(m, s);
    if (s->kind != TS_FOR && s->kind != TS_LET && s->kind != TS_BLOCK) return c;
    if (c == s) c = mt_ts_copy(m->arena, s);
    if (s->kind != TS_BLOCK) {
        c->var = renewed(m->arena, r, s->var);
        return c;
    }
    mt_titer *it = MT_NEW_ARRAY(m->arena, mt_titer, c->niters > 0 ? c->niters : 1);
    for (int i = 0; i < c->niters; i++) it[i] = c->iters[i], it[i].var = renewed(m->arena, r, s->iters[i].var);
    c->iters = it;
    return c;
}

static bool called_before(mt_gbinding *const *members, int i) {
    for (int j = 0; j < i; j++)
        if (members[j]->callee == members[i]->callee) return true;
    return false;
}

typedef struct fuser {
    mt_arena *a;
    mt_tfunc *f;
    const char *sym_names[64];
    mt_tvar *syms[64];
    int nsym;
} fuser;

static mt_tvar *sym_var(fuser *fz, const char *name) {
    for (int i = 0; i < fz->nsym; i++)
        if (strcmp(fz->sym_names[i], name) == 0) return fz->syms[i];
    if (fz->nsym == MT_ARRAY_LEN(fz->syms)) mt_ice("too many symbolic dims in one fusion group");
    mt_tvar *v = mt_tvar_new(fz->a, name, MT_INT64);
    fz->sym_names[fz->nsym] = name;
    fz->syms[fz->nsym++] = v;
    return v;
}

static mt_tbuffer *group_buffer(fuser *fz, const mt_gvar *v) {
    mt_texpr *shape[MT_MAX_RANK];
    for (int d = 0; d < v->type.ndim; d++) {
        mt_dim dim = v->type.dims[d];
        shape[d] = dim.sym ? mt_te_var(fz->a, sym_var(fz, dim.sym)) : mt_te_i64(fz->a, dim.value);
    }
    return mt_tbuffer_new(fz->a, v->name, v->type.dtype, v->type.ndim, shape);
}

static bool produced_by(mt_gbinding *const *members, int n, const mt_gvar *v) {
    for (int i = 0; i < n; i++)
        for (int k = 0; k < members[i]->nouts; k++)
            if (members[i]->outs[k] == v) return true;
    return false;
}

static bool in_list(mt_gvar *const *vs, int n, const mt_gvar *v) {
    for (int i = 0; i < n; i++)
        if (vs[i] == v) return true;
    return false;
}

/* Is v used outside the group: by another binding of its block, or anywhere
 * else in the function (other blocks, conditions, returns)? `uses` counts
 * every use in the function as it was before this pass (fusing a group keeps
 * each value it reads from outside used, so zero stays zero and non-zero
 * non-zero); the group's own uses are taken off. */
static bool used_outside(const mt_ptrmap *uses, mt_gbinding *const *members, int n,
                         const mt_gvar *v) {
    int inside = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < members[i]->nargs; k++) inside += members[i]->args[k] == v;
    return mt_ptrmap_get(uses, v) > inside;
}

/* Builds the fused loop function and the binding that calls it. */
static mt_gbinding *fuse_group(mt_arena *a, mt_gmodule *m, const mt_ptrmap *uses,
                               mt_gbinding *const *members, int n) {
    MT_VEC(mt_gvar *) inputs = {0};
    MT_VEC(mt_gvar *) outputs = {0};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < members[i]->nargs; k++) {
            mt_gvar *v = members[i]->args[k];
            if (!produced_by(members, n, v) && !in_list(inputs.data, inputs.len, v))
                MT_VEC_PUSH(a, &inputs, v);
        }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < members[i]->nouts; k++)
            if (used_outside(uses, members, n, members[i]->outs[k]))
                MT_VEC_PUSH(a, &outputs, members[i]->outs[k]);

    /* fused_<op1>_<op2>_...; a long group keeps its first ops' names and says
     * how many more there are (symbol names stay short and readable) */
    const char *name = "fused";
    for (int i = 0; i < n; i++) {
        const char *op = members[i]->op ? members[i]->op->name : members[i]->callee->name;
        if (strlen(name) + strlen(op) > 56) {
            name = mt_arena_printf(a, "%s_and_%d_more", name, n - i);
            break;
        }
        name = mt_arena_printf(a, "%s_%s", name, op);
    }
    fuser fz;
    memset(&fz, 0, sizeof fz);
    fz.a = a;
    fz.f = mt_tfunc_new(a, name);

    /* one group buffer per value: parameters first, then intermediates */
    MT_VEC(mt_gvar *) vals = {0};
    MT_VEC(mt_tbuffer *) bufs = {0};
    for (int i = 0; i < inputs.len; i++) {
        mt_tbuffer *b = group_buffer(&fz, inputs.data[i]);
        mt_tfunc_add_param(a, fz.f, b, NULL);
        MT_VEC_PUSH(a, &vals, inputs.data[i]);
        MT_VEC_PUSH(a, &bufs, b);
    }
    for (int i = 0; i < outputs.len; i++) {
        mt_tbuffer *b = group_buffer(&fz, outputs.data[i]);
        mt_tfunc_add_param(a, fz.f, b, NULL);
        MT_VEC_PUSH(a, &vals, outputs.data[i]);
        MT_VEC_PUSH(a, &bufs, b);
    }
    fz.f->num_outputs = outputs.len;
    MT_VEC(mt_tbuffer *) allocs = {0};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < members[i]->nouts; k++) {
            mt_gvar *v = members[i]->outs[k];
            if (in_list(outputs.data, outputs.len, v)) continue;
            mt_tbuffer *b = group_buffer(&fz, v);
            MT_VEC_PUSH(a, &allocs, b);
            MT_VEC_PUSH(a, &vals, v);
            MT_VEC_PUSH(a, &bufs, b);
        }

    /* the members' bodies, renamed, their statements in one flat sequence
     * (the schedule rules match a function's top-level statements: a
     * member's own sequence -- legalize's guard for an empty symbolic K,
     * then the matmul -- nested in the group's hid its matmul from them) */
    mt_tstmt **body = MT_NEW_ARRAY(a, mt_tstmt *, n);
    for (int i = 0; i < n; i++) {
        const mt_gbinding *mb = members[i];
        const mt_tfunc *cf = mb->callee;
        bufmap *bm = MT_NEW(a, bufmap);
        int pi = 0;
        for (int p = 0; p < cf->nparams; p++) {
            if (!cf->params[p].buf) mt_ice("fusing a loop function with scalar params");
            const mt_gvar *v = p < mb->nargs ? mb->args[p] : mb->outs[p - mb->nargs];
            for (int j = 0; j < vals.len; j++)
                if (vals.data[j] == v) {
                    if (bm->n == MT_ARRAY_LEN(bm->from)) mt_ice("too many buffers in a fusion group");
                    bm->from[bm->n] = cf->params[p].buf;
                    bm->to[bm->n++] = bufs.data[j];
                    pi++;
                    break;
                }
        }
        MT_ASSERT(pi == cf->nparams);
        mt_tvar *from[64];
        mt_texpr *to[64];
        MT_ASSERT(cf->nsym <= 64);
        for (int k = 0; k < cf->nsym; k++) {
            from[k] = cf->sym_vars[k];
            to[k] = mt_te_var(a, sym_var(&fz, cf->sym_vars[k]->name));
        }
        /* the member's own scratch buffers (accumulators, row statistics)
         * come along, their shapes in the group's symbolic dims */
        for (int k = 0; k < cf->nallocs; k++) {
            const mt_tbuffer *ob = cf->allocs[k];
            mt_texpr *shape[MT_MAX_RANK];
            for (int d = 0; d < ob->ndim; d++)
                shape[d] = cf->nsym ? mt_tsubst_expr(a, ob->shape[d], from, to, cf->nsym) : ob->shape[d];
            mt_tbuffer *nb = mt_tbuffer_new(a, ob->name, ob->dtype, ob->ndim, shape);
            nb->scope = ob->scope;
            if (bm->n == MT_ARRAY_LEN(bm->from)) mt_ice("too many buffers in a fusion group");
            bm->from[bm->n] = cf->allocs[k];
            bm->to[bm->n++] = nb;
            MT_VEC_PUSH(a, &allocs, nb);
        }
        mt_tmutator mut = {a, remap_expr, remap_stmt, bm};
        mt_tstmt *s = mt_tmutate_stmt(&mut, cf->body);
        if (called_before(members, i)) {
            renew r = {{0}, {0}};
            mt_tmutator rm = {a, renew_expr, renew_stmt, &r};
            s = mt_tmutate_stmt(&rm, s);
        }
        body[i] = cf->nsym ? mt_tsubst_stmt(a, s, from, to, cf->nsym) : s;
    }
    fz.f->allocs = allocs.data;
    fz.f->nallocs = allocs.len;
    fz.f->loc = members[n - 1]->loc; /* the fused binding's place; blocks keep their own */
    fz.f->body = mt_ts_at(mt_ts_seq_flat(a, body, n), fz.f->loc);
    fz.f->sym_vars = MT_NEW_ARRAY(a, mt_tvar *, fz.nsym > 0 ? fz.nsym : 1);
    for (int k = 0; k < fz.nsym; k++) fz.f->sym_vars[k] = fz.syms[k];
    fz.f->nsym = fz.nsym;

    /* the group's pattern is its loosest member's */
    mt_op_pattern pat = MT_PAT_ELEMWISE;
    for (int i = 0; i < n; i++) {
        mt_op_pattern p = mt_tfunc_pattern(members[i]->callee);
        if (p > pat) pat = p;
    }
    mt_tfunc_set_attr(a, fz.f, "op_pattern", mt_pattern_str(pat));
    mt_gmodule_add_tfunc(a, m, fz.f);
    mt_gbinding *nb = mt_gbinding_tir(a, outputs.data, outputs.len, fz.f, inputs.data,
                                      inputs.len, members[n - 1]->loc);
    nb->device = members[n - 1]->device; /* fuse_ops groups one device's bindings */
    return nb;
}

typedef struct walk {
    mt_arena *arena;
    mt_gmodule *module;
    mt_ptrmap uses; /* uses of each value in the function, before fusion */
} walk;

static void fuse_block(mt_gblock *blk, void *ctx) {
    walk *w = ctx;
    mt_arena *a = w->arena;
    int n = blk->nbindings, ngroups = 0;
    for (int i = 0; i < n; i++)
        if (blk->bindings[i]->group >= ngroups) ngroups = blk->bindings[i]->group + 1;
    if (ngroups == 0) return;
    /* each group's members in order (bucketed by group id), and its last one */
    int *count = MT_NEW_ARRAY(a, int, ngroups), *start = MT_NEW_ARRAY(a, int, ngroups + 1);
    int *last = MT_NEW_ARRAY(a, int, ngroups);
    for (int i = 0; i < n; i++) {
        int g = blk->bindings[i]->group;
        if (g < 0) continue;
        count[g]++;
        last[g] = i;
    }
    for (int g = 0; g < ngroups; g++) start[g + 1] = start[g] + count[g];
    mt_gbinding **sorted = MT_NEW_ARRAY(a, mt_gbinding *, start[ngroups] > 0 ? start[ngroups] : 1);
    int *fill = MT_NEW_ARRAY(a, int, ngroups);
    for (int i = 0; i < n; i++) {
        int g = blk->bindings[i]->group;
        if (g >= 0) sorted[start[g] + fill[g]++] = blk->bindings[i];
    }
    mt_gbinding **out = MT_NEW_ARRAY(a, mt_gbinding *, n > 0 ? n : 1);
    int nout = 0;
    for (int i = 0; i < n; i++) {
        mt_gbinding *b = blk->bindings[i];
        if (b->group < 0) {
            out[nout++] = b;
            continue;
        }
        /* the root is the group's last member: emit the group there */
        if (last[b->group] != i) continue;
        out[nout++] = fuse_group(a, w->module, &w->uses, sorted + start[b->group], count[b->group]);
    }
    blk->bindings = out;
    blk->nbindings = nout;
}

mt_gmodule *mt_graph_fuse_tir(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        walk w = {a, m, {0}};
        mt_gfunc_count_uses(a, m->funcs[fi], &w.uses);
        mt_gfunc_foreach_bindings(m->funcs[fi], fuse_block, &w);
    }
    return m;
}
