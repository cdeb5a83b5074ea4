/*
 * realize_devices.c -- every value gets a device, and a copy is inserted
 * wherever a value crosses devices (Relax's RealizeVDevice and to_vdevice).
 *
 * The builder records on each op binding the device of the innermost
 * `with device(...)` around it ({0, 0} outside any, or when it names the
 * default device: mt_gmodule.default_device, the target's). This pass walks
 * the function in program order and:
 *
 *  - gives each binding's outputs its device (mt_gtype.device); parameters,
 *    loop variables and constants stay on the default device {0, 0};
 *  - where a binding reads a value that lives on another device, inserts
 *    `x_<dev> = R.to_vdevice(x, "<dev>")` just before it and reads the copy
 *    instead; one copy per value and device within a block of bindings, so
 *    that two readers on the same device share it. Constants are never
 *    copied: legalization makes them immediates of the loop functions;
 *  - makes the values an `if` merges and a loop carries live on one device:
 *    a merged value lives where its then-branch value does (the else-branch
 *    value when the then value is a constant), a carried value where its
 *    initial value does, and a branch or loop body that produces it
 *    elsewhere ends with a copy;
 *  - leaves returned values where they are: a result computed on a device
 *    stays there (the caller copies it if it wants it elsewhere).
 *
 * Conditions, assertions and loop bounds may live on any device: the
 * executor reads those scalars through the device interface.
 *
 * Assumes: built (op bindings, no call_tir yet). Guarantees: every non-
 * constant argument of a binding lives on the binding's device; every
 * merged and carried value has its branch and loop values on its device.
 */
#include <stdio.h>
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"
#include "support/strbuf.h"

typedef struct copy_entry {
    const mt_gvar *src;
    mt_device dev;
    mt_gvar *copy;
} copy_entry;

typedef struct placer {
    mt_arena *a;
    mt_device def;    /* the module's default device, for the copies' names and printing */
    mt_nameset names; /* every name of the function, for the copies' fresh names */
    MT_VEC(copy_entry) copies; /* the copies made in the current block */
} placer;

static bool is_const(const mt_gvar *v) { return v->is_const; }

static void collect_names(placer *p, const mt_gbody *body);

static void collect_block_names(placer *p, const mt_gblock *blk) {
    for (int i = 0; i < blk->nbindings; i++)
        for (int k = 0; k < blk->bindings[i]->nouts; k++)
            mt_nameset_add(p->a, &p->names, blk->bindings[i]->outs[k]->name);
    for (int k = 0; k < blk->nmerged; k++) mt_nameset_add(p->a, &p->names, blk->merged[k]->name);
    for (int k = 0; k < blk->ncarried; k++) mt_nameset_add(p->a, &p->names, blk->carried[k]->name);
    if (blk->ivar) mt_nameset_add(p->a, &p->names, blk->ivar->name);
    collect_names(p, &blk->then_body);
    collect_names(p, &blk->else_body);
    collect_names(p, &blk->body);
}

static void collect_names(placer *p, const mt_gbody *body) {
    for (int i = 0; i < body->nblocks; i++) collect_block_names(p, body->blocks[i]);
}

/* A new copy binding of src to dev ({0, 0}: the default device): "a_test",
 * "lv_cuda1", "e_cpu", ... The binding names the device itself; the copy's
 * type keeps {0, 0} for the default device. */
static mt_gbinding *make_copy(placer *p, mt_gvar *src, mt_device dev, mt_loc loc) {
    char name[32];
    mt_device where = dev.type ? dev : p->def;
    mt_device_name(where, name, sizeof name);
    char *colon = strchr(name, ':');
    if (colon && strcmp(colon, ":0") == 0) *colon = 0;
    else if (colon) memmove(colon, colon + 1, strlen(colon));
    const char *base = mt_arena_printf(p->a, "%s_%s", src->name, name);
    mt_gtype t = src->type;
    t.device = dev;
    mt_gvar *out = mt_gvar_new(p->a, mt_nameset_fresh(p->a, &p->names, base), &t, src->loc);
    return mt_gbinding_to_device(p->a, out, src, where, loc);
}

typedef MT_VEC(mt_gbinding *) bindings;

/* The value of v on dev: v itself, or a copy pushed on out (before the
 * binding that needs it) or made earlier in the block. */
static mt_gvar *on_device(placer *p, mt_gvar *v, mt_device dev, mt_loc loc, bindings *out) {
    if (is_const(v) || mt_device_equal(v->type.device, dev)) return v;
    for (int i = 0; i < p->copies.len; i++)
        if (p->copies.data[i].src == v && mt_device_equal(p->copies.data[i].dev, dev))
            return p->copies.data[i].copy;
    mt_gbinding *c = make_copy(p, v, dev, loc);
    MT_VEC_PUSH(p->a, out, c);
    copy_entry e = {v, dev, c->outs[0]};
    MT_VEC_PUSH(p->a, &p->copies, e);
    return c->outs[0];
}

static void place_bindings(placer *p, mt_gblock *blk) {
    bindings out = {0};
    p->copies.len = 0;
    for (int i = 0; i < blk->nbindings; i++) {
        mt_gbinding *b = blk->bindings[i];
        if (b->kind != MT_CALL_TO_DEVICE)
            for (int k = 0; k < b->nargs; k++)
                b->args[k] = on_device(p, b->args[k], b->device, b->loc, &out);
        for (int k = 0; k < b->nouts; k++) b->outs[k]->type.device = b->device;
        MT_VEC_PUSH(p->a, &out, b);
    }
    blk->bindings = out.data;
    blk->nbindings = out.len;
}

/* vals[k] moved onto the device of dst[k] at the end of body, where they differ. */
static void settle(placer *p, mt_gbody *body, mt_gvar *const *dst, mt_gvar **vals, int n, mt_loc loc) {
    mt_gblock *tail = NULL;
    for (int k = 0; k < n; k++) {
        if (is_const(vals[k]) || mt_device_equal(vals[k]->type.device, dst[k]->type.device)) continue;
        if (!tail) tail = mt_gblock_new(p->a, MT_GBLOCK_BINDINGS, loc);
        mt_gbinding *c = make_copy(p, vals[k], dst[k]->type.device, loc);
        mt_gblock_add(p->a, tail, c);
        vals[k] = c->outs[0];
    }
    if (tail) mt_gbody_add(p->a, body, tail);
}

static void place_body(placer *p, mt_gbody *body);

static void place_block(placer *p, mt_gblock *blk) {
    switch (blk->kind) {
    case MT_GBLOCK_BINDINGS: place_bindings(p, blk); break;
    case MT_GBLOCK_IF:
        place_body(p, &blk->then_body);
        place_body(p, &blk->else_body);
        for (int k = 0; k < blk->nmerged; k++) {
            const mt_gvar *from = is_const(blk->then_vals[k]) ? blk->else_vals[k] : blk->then_vals[k];
            if (!is_const(from)) blk->merged[k]->type.device = from->type.device;
        }
        settle(p, &blk->then_body, blk->merged, blk->then_vals, blk->nmerged, blk->loc);
        settle(p, &blk->else_body, blk->merged, blk->else_vals, blk->nmerged, blk->loc);
        break;
    case MT_GBLOCK_LOOP:
        for (int k = 0; k < blk->ncarried; k++)
            if (!is_const(blk->carried_init[k]))
                blk->carried[k]->type.device = blk->carried_init[k]->type.device;
        place_body(p, &blk->body);
        settle(p, &blk->body, blk->carried, blk->carried_next, blk->ncarried, blk->loc);
        break;
    case MT_GBLOCK_ASSERT: break;
    }
}

static void place_body(placer *p, mt_gbody *body) {
    for (int i = 0; i < body->nblocks; i++) place_block(p, body->blocks[i]);
}

/* Is any binding of the body placed on a device of its own? */
static bool any_placed(const mt_gbody *body) {
    for (int i = 0; i < body->nblocks; i++) {
        const mt_gblock *blk = body->blocks[i];
        for (int j = 0; j < blk->nbindings; j++)
            if (blk->bindings[j]->device.type) return true;
        if (any_placed(&blk->then_body) || any_placed(&blk->else_body) || any_placed(&blk->body))
            return true;
    }
    return false;
}

mt_gmodule *mt_graph_realize_devices(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        mt_gfunc *f = m->funcs[fi];
        if (!any_placed(&f->body)) continue; /* one device: nothing to do */
        placer p;
        memset(&p, 0, sizeof p);
        p.a = a;
        p.def = m->default_device;
        for (int i = 0; i < f->nparams; i++) mt_nameset_add(a, &p.names, f->params[i]->name);
        collect_names(&p, &f->body);
        place_body(&p, &f->body);
    }
    return m;
}
