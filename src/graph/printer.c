/*
 * printer.c -- graph IR to TVMScript-style text (see graph.h for a sample).
 *
 * The output is meant for people and golden tests: stable, one binding per
 * line, constants inline as R.const(value, "dtype"), loop functions named
 * through `cls.` as TVMScript does inside an IRModule.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "support/common.h"
#include "support/cnum.h"
#include "support/strbuf.h"

static void put_const(mt_sb *sb, const mt_gvar *v) {
    mt_dtype dt = v->type.dtype;
    if (mt_dtype_is_float(dt)) {
        char buf[64];
        mt_c_snprintf(buf, sizeof buf, "%.9g", v->fconst);
        if (isfinite(v->fconst) && !strpbrk(buf, ".e")) strcat(buf, ".0");
        mt_sb_printf(sb, "R.const(%s, \"%s\")", buf, mt_dtype_str(dt));
    } else if (dt == MT_BOOL) {
        mt_sb_printf(sb, "R.const(%s, \"bool\")", v->iconst ? "True" : "False");
    } else {
        mt_sb_printf(sb, "R.const(%lld, \"%s\")", (long long)v->iconst, mt_dtype_str(dt));
    }
}

static void put_value(mt_sb *sb, const mt_gvar *v) {
    if (v->is_const)
        put_const(sb, v);
    else
        mt_sb_puts(sb, v->name);
}

static void put_sep(mt_sb *sb, bool *first) {
    if (!*first) mt_sb_puts(sb, ", ");
    *first = false;
}

static void put_ints(mt_sb *sb, bool *first, const char *key, const int64_t *v, int n) {
    put_sep(sb, first);
    mt_sb_printf(sb, "%s=[", key);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_puts(sb, ", ");
        if (v[i] == MT_SLICE_OMITTED)
            mt_sb_puts(sb, "None");
        else
            mt_sb_printf(sb, "%lld", (long long)v[i]);
    }
    mt_sb_putc(sb, ']');
}

/* The attributes that are set, as keywords: axis=[1], keepdims=True, ... */
static void put_attrs(mt_sb *sb, const mt_gattrs *at, bool first) {
    if (!at) return;
    if (at->has_axes) put_ints(sb, &first, "axis", at->axes, at->naxes);
    if (at->keepdims) put_sep(sb, &first), mt_sb_puts(sb, "keepdims=True");
    if (at->nshape) {
        put_sep(sb, &first);
        mt_sb_puts(sb, "shape=(");
        for (int i = 0; i < at->nshape; i++) {
            if (i) mt_sb_puts(sb, ", ");
            if (at->shape[i].sym)
                mt_sb_printf(sb, "\"%s\"", at->shape[i].sym);
            else
                mt_sb_printf(sb, "%lld", (long long)at->shape[i].value);
        }
        mt_sb_puts(sb, at->nshape == 1 ? ",)" : ")");
    }
    if (at->has_dtype) put_sep(sb, &first), mt_sb_printf(sb, "dtype=\"%s\"", mt_dtype_str(at->dtype));
    if (at->has_value) put_sep(sb, &first), mt_sb_printf(sb, "value=%.9g", at->value);
    if (at->mode != MT_MODE_NONE)
        put_sep(sb, &first), mt_sb_printf(sb, "mode=\"%s\"", mt_attr_mode_str(at->mode));
    if (at->nslice) {
        put_ints(sb, &first, "begin", at->begin, at->nslice);
        put_ints(sb, &first, "end", at->end, at->nslice);
        put_ints(sb, &first, "strides", at->step, at->nslice);
    }
    if (at->size[0]) put_ints(sb, &first, "size", at->size, 2);
    if (at->stride[0]) put_ints(sb, &first, "stride", at->stride, 2);
    if (at->size[0] || at->stride[0]) put_ints(sb, &first, "padding", at->padding, 2);
    if (at->dilation[0]) put_ints(sb, &first, "dilation", at->dilation, 2);
    if (at->groups) put_sep(sb, &first), mt_sb_printf(sb, "groups=%lld", (long long)at->groups);
    if (at->has_dims) put_ints(sb, &first, "dims", at->dims, 2);
}

static void put_binding(mt_sb *sb, mt_arena *a, const mt_gbinding *b, int indent) {
    mt_sb_indent(sb, indent);
    for (int i = 0; i < b->nouts; i++) mt_sb_printf(sb, "%s%s", i ? ", " : "", b->outs[i]->name);
    if (b->kind == MT_CALL_OP && b->device.type) { /* placed: say where */
        /* before realize_devices only the binding knows its device */
        mt_gtype t = b->outs[0]->type;
        t.device = b->device;
        mt_sb_printf(sb, ": %s", mt_gtype_str(a, &t));
    }
    mt_sb_puts(sb, " = ");
    if (b->kind == MT_CALL_TO_DEVICE) {
        char dev[32];
        mt_sb_puts(sb, "R.to_vdevice(");
        put_value(sb, b->args[0]);
        mt_sb_printf(sb, ", \"%s\")\n", mt_device_name(b->device, dev, sizeof dev));
        return;
    }
    if (b->kind == MT_CALL_OP) {
        mt_sb_printf(sb, "R.%s(", b->op->name);
        for (int i = 0; i < b->nargs; i++) {
            if (i) mt_sb_puts(sb, ", ");
            put_value(sb, b->args[i]);
        }
        put_attrs(sb, b->attrs, b->nargs == 0);
        mt_sb_puts(sb, ")\n");
        return;
    }
    if (b->kind == MT_CALL_EXTERN) mt_sb_printf(sb, "R.call_dps_packed(\"%s\", (", b->ext->name);
    else mt_sb_printf(sb, "R.call_tir(cls.%s, (", b->callee->name);
    for (int i = 0; i < b->nargs; i++) {
        if (i) mt_sb_puts(sb, ", ");
        put_value(sb, b->args[i]);
    }
    if (b->nargs == 1) mt_sb_putc(sb, ',');
    mt_sb_puts(sb, "), out_sinfo=");
    if (b->nouts > 1) mt_sb_putc(sb, '[');
    for (int i = 0; i < b->nouts; i++) {
        if (i) mt_sb_puts(sb, ", ");
        mt_sb_puts(sb, mt_gtype_str(a, &b->outs[i]->type));
    }
    if (b->nouts > 1) mt_sb_putc(sb, ']');
    mt_sb_puts(sb, ")\n");
}

static void put_body(mt_sb *sb, mt_arena *a, const mt_ptrmap *uses, const mt_gbody *body, int indent);

static void put_bindings(mt_sb *sb, mt_arena *a, const mt_ptrmap *uses, const mt_gblock *blk,
                         int indent) {
    if (blk->nbindings == 0) return;
    if (!blk->dataflow) {
        for (int i = 0; i < blk->nbindings; i++) put_binding(sb, a, blk->bindings[i], indent);
        return;
    }
    mt_sb_indent(sb, indent);
    mt_sb_puts(sb, "with R.dataflow():\n");
    for (int i = 0; i < blk->nbindings; i++) put_binding(sb, a, blk->bindings[i], indent + 4);
    /* R.output names the block's values used after it: used more often in
     * the function (`uses`, counted once) than inside the block */
    mt_ptrmap inside = {0};
    for (int i = 0; i < blk->nbindings; i++)
        for (int k = 0; k < blk->bindings[i]->nargs; k++)
            mt_ptrmap_add(a, &inside, blk->bindings[i]->args[k], 1);
    mt_sb_indent(sb, indent + 4);
    mt_sb_puts(sb, "R.output(");
    int n = 0;
    for (int i = 0; i < blk->nbindings; i++)
        for (int k = 0; k < blk->bindings[i]->nouts; k++) {
            const mt_gvar *v = blk->bindings[i]->outs[k];
            if (mt_ptrmap_get(uses, v) > mt_ptrmap_get(&inside, v))
                mt_sb_printf(sb, "%s%s", n++ ? ", " : "", v->name);
        }
    mt_sb_puts(sb, ")\n");
}

static void put_copies(mt_sb *sb, mt_gvar *const *dst, mt_gvar *const *src, int n, int indent) {
    for (int k = 0; k < n; k++) {
        mt_sb_indent(sb, indent);
        mt_sb_printf(sb, "%s = ", dst[k]->name);
        put_value(sb, src[k]);
        mt_sb_putc(sb, '\n');
    }
}

static void put_block(mt_sb *sb, mt_arena *a, const mt_ptrmap *uses, const mt_gblock *b, int indent) {
    switch (b->kind) {
    case MT_GBLOCK_BINDINGS:
        put_bindings(sb, a, uses, b, indent);
        break;
    case MT_GBLOCK_IF:
        mt_sb_indent(sb, indent);
        mt_sb_printf(sb, "if %s:\n", b->cond->name);
        put_body(sb, a, uses, &b->then_body, indent + 4);
        put_copies(sb, b->merged, b->then_vals, b->nmerged, indent + 4);
        if (b->then_body.nblocks == 0 && b->nmerged == 0) {
            mt_sb_indent(sb, indent + 4);
            mt_sb_puts(sb, "pass\n");
        }
        mt_sb_indent(sb, indent);
        mt_sb_puts(sb, "else:\n");
        put_body(sb, a, uses, &b->else_body, indent + 4);
        put_copies(sb, b->merged, b->else_vals, b->nmerged, indent + 4);
        if (b->else_body.nblocks == 0 && b->nmerged == 0) {
            mt_sb_indent(sb, indent + 4);
            mt_sb_puts(sb, "pass\n");
        }
        break;
    case MT_GBLOCK_LOOP:
        put_copies(sb, b->carried, b->carried_init, b->ncarried, indent);
        mt_sb_indent(sb, indent);
        mt_sb_printf(sb, "for %s in R.range(", b->ivar->name);
        put_value(sb, b->start);
        mt_sb_puts(sb, ", ");
        put_value(sb, b->stop);
        mt_sb_puts(sb, ", ");
        put_value(sb, b->step);
        mt_sb_puts(sb, "):\n");
        put_body(sb, a, uses, &b->body, indent + 4);
        put_copies(sb, b->carried, b->carried_next, b->ncarried, indent + 4);
        if (b->body.nblocks == 0 && b->ncarried == 0) {
            mt_sb_indent(sb, indent + 4);
            mt_sb_puts(sb, "pass\n");
        }
        break;
    case MT_GBLOCK_ASSERT:
        mt_sb_indent(sb, indent);
        mt_sb_printf(sb, "R.assert_op(%s, \"%s\")\n", b->cond->name, b->message ? b->message : "");
        break;
    }
}

static void put_body(mt_sb *sb, mt_arena *a, const mt_ptrmap *uses, const mt_gbody *body, int indent) {
    for (int i = 0; i < body->nblocks; i++) put_block(sb, a, uses, body->blocks[i], indent);
}

static void put_func(mt_sb *sb, mt_arena *a, const mt_gfunc *f) {
    mt_sb_printf(sb, "@R.function\ndef %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        if (i) mt_sb_puts(sb, ", ");
        mt_sb_printf(sb, "%s: %s", f->params[i]->name, mt_gtype_str(a, &f->params[i]->type));
    }
    mt_sb_puts(sb, "):\n");
    bool any = false; /* bound parameters: a comment, so that the text still parses */
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i]->bound) {
            mt_sb_printf(sb, "%s%s", any ? ", " : "    # bound at compile time: ", f->params[i]->name);
            any = true;
        }
    if (any) mt_sb_putc(sb, '\n');
    mt_ptrmap uses = {0};
    mt_gfunc_count_uses(a, f, &uses);
    put_body(sb, a, &uses, &f->body, 4);
    mt_sb_puts(sb, "    return ");
    if (f->noutputs != 1) mt_sb_putc(sb, '(');
    for (int i = 0; i < f->noutputs; i++) {
        if (i) mt_sb_puts(sb, ", ");
        put_value(sb, f->outputs[i]);
    }
    if (f->noutputs != 1) mt_sb_putc(sb, ')');
    mt_sb_putc(sb, '\n');
}

const char *mt_gfunc_print(mt_arena *a, const mt_gfunc *f) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    put_func(&sb, a, f);
    return mt_sb_str(&sb);
}

const char *mt_gmodule_print(mt_arena *a, const mt_gmodule *m, bool with_tir) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    for (int i = 0; i < m->nfuncs; i++) {
        if (i) mt_sb_putc(&sb, '\n');
        put_func(&sb, a, m->funcs[i]);
    }
    if (with_tir)
        for (int i = 0; i < m->ntfuncs; i++) {
            mt_sb_putc(&sb, '\n');
            mt_sb_puts(&sb, mt_tfunc_print(a, m->tfuncs[i]));
        }
    return mt_sb_str(&sb);
}
