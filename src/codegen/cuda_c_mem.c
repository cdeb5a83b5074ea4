/*
 * cuda_c_mem.c -- lets, allocations, stores, vector accesses and the wmma
 * calls of a CUDA kernel (the printer's state and names:
 * cuda_c_internal.h, cuda_c.c; expressions: cuda_c_expr.c).
 *
 * Vectors (lanes > 1, what the vectorize pass makes of a `vectorized`
 * loop: the target's vector_bytes is 16, so n = 4 float32 or int32 lanes,
 * 2 of float64 or int64) are printed lane by lane (mt_arith_lane), with
 * each unit-stride load and store of global or shared memory of a CUDA
 * vector type (float4, float2, int4, int2, double2, longlong2, and our own
 * mt_half8 / mt_bf16x8 for 8 16-bit floats) made one access where its address is
 * aligned to the type, element by element where not (the mt_load_<type> /
 * mt_store_<type> helpers: a tensor is aligned only to its element):
 *
 *     {
 *         const float4 a_v = mt_load_float4(&a[i * 4]);
 *         float4 out_v;
 *         out_v.x = expf(a_v.x) + 1.0f;
 *         ...
 *         mt_store_float4(&out[i * 4], out_v);
 *     }
 *
 * A vector let is a const per lane (`t`, `t_1`, ...). A copy
 * `dst[T.Ramp(d, 1, n)] = src[T.Ramp(s, 1, n)]` of n = 2 or 4 float32 or
 * int32 elements from shared memory (the GPU matmul's reads of its shared
 * tiles) is one float4 (int4, float2, int2) load from &src[s], which the
 * schedule guarantees to be aligned (s a multiple of n), then n scalar
 * stores.
 */
#include <stdint.h>
#include <string.h>

#include "codegen/cuda_c_internal.h"
#include "support/common.h"
#include "tir/arith.h"

/* ---- vectors ----------------------------------------------------------------- */

/* What the vectorize pass leaves in a kernel: stores of T.Ramp(b, 1, n)
 * and lets of vector values, loads at ramps, broadcasts. Each is printed
 * lane by lane (mt_arith_lane), except that a unit-stride load or store of
 * a dtype and width CUDA has a vector type for (float4, float2, int4, int2,
 * double2, longlong2; mt_half8, mt_bf16x8) is one access where its address is aligned to the
 * type's size, through mt_load_<type> / mt_store_<type>, which check the
 * address and fall back to the elements: a tensor's data is only aligned
 * to its element (a view, a host program's own pointer). */

/* The H_LOAD_* helper for n elements of b (its store: + VECTOR_TYPES), or
 * H_COUNT_ for none: a thread's own buffers (registers) are accessed lane
 * by lane, so that their address is never taken (nvcc would put them in
 * local memory). */
static helper vector_helper(const mt_tbuffer *b, int n) {
    mt_dtype t = b->dtype;
    if (b->scope != MT_SCOPE_GLOBAL && b->scope != MT_SCOPE_SHARED) return H_COUNT_;
    if (n == 8) return t == MT_FLOAT16 ? H_LOAD_HALF8 : t == MT_BFLOAT16 ? H_LOAD_BF16X8 : H_COUNT_;
    if (n == 4) return t == MT_FLOAT32 ? H_LOAD_FLOAT4 : t == MT_INT32 ? H_LOAD_INT4 : H_COUNT_;
    if (n != 2) return H_COUNT_;
    switch (t) {
    case MT_FLOAT32: return H_LOAD_FLOAT2;
    case MT_INT32: return H_LOAD_INT2;
    case MT_FLOAT64: return H_LOAD_DOUBLE2;
    case MT_INT64: return H_LOAD_LONGLONG2;
    default: return H_COUNT_;
    }
}

/* The fields of CUDA's vector types, lane by lane (of mt_half8 and
 * mt_bf16x8: their pairs' halves). */
static const char lane_field[4] = {'x', 'y', 'z', 'w'};
static const char *const pair_field[8] = {"a.x", "a.y", "b.x", "b.y", "c.x", "c.y", "d.x", "d.y"};

static const char *field(mt_cu *c, int lanes, int k) {
    return lanes == 8 ? pair_field[k] : mt_arena_printf(c->a, "%c", lane_field[k]);
}

/* The base of a unit-stride ramp, else NULL. */
static const mt_texpr *unit_base(const mt_texpr *ix) {
    int64_t stride;
    return ix->kind == TE_RAMP && mt_te_is_const_int(ix->b, &stride) && stride == 1 ? ix->a : NULL;
}

/* mt_arith_lane's leaf: the lane variable of a vector value in scope. */
static mt_texpr *lane_leaf(void *ctx, const mt_texpr *e, int k) {
    mt_cu *c = ctx;
    for (int i = c->vb.len - 1; i >= 0; i--) {
        const mt_cu_vbind *b = &c->vb.data[i];
        if (e->kind == TE_VAR ? b->var == e->var : b->load && mt_texpr_equal(b->load, e))
            return mt_te_var(c->a, b->lane[k]);
    }
    return NULL;
}

mt_texpr *mt_cu_lane(mt_cu *c, const mt_texpr *e, int k) { return mt_arith_lane(c->a, e, k, lane_leaf, c); }

/* Lane variables named "<n>.x", ".y", ... (n a vector const). */
static mt_tvar **field_lanes(mt_cu *c, const char *n, mt_dtype t, int lanes) {
    mt_tvar **v = MT_NEW_ARRAY(c->a, mt_tvar *, lanes);
    for (int k = 0; k < lanes; k++) {
        v[k] = mt_tvar_new(c->a, n, t);
        mt_cu_bind(c, v[k], mt_arena_printf(c->a, "%s.%s", n, field(c, lanes, k)));
        if (mt_dtype_is_half(t)) mt_ptrmap_add(c->a, &c->half_params, v[k], (int)t + 1); /* a __half, read as float */
    }
    return v;
}

typedef struct vloads {
    mt_arena *a;
    MT_VEC(const mt_texpr *) list;
} vloads;

static void find_vload(mt_tvisitor *v, const mt_texpr *e) {
    vloads *l = v->ctx;
    if (e->kind == TE_LOAD && e->lanes > 1) MT_VEC_PUSH(l->a, &l->list, e);
    mt_tvisit_expr_children(v, e);
}

/* Each unit-stride vector load of e with a CUDA type, not in scope yet,
 * as a const of that type (`const float4 a_v = mt_load_float4(&a[i]);`). */
static void hoist_loads(mt_cu *c, const mt_texpr *e) {
    vloads l = {c->a, {0}};
    mt_tvisitor v = {find_vload, NULL, &l};
    mt_tvisit_expr(&v, e);
    for (int i = 0; i < l.list.len; i++) {
        const mt_texpr *x = l.list.data[i], *base = x->nargs == 1 ? unit_base(x->args[0]) : NULL;
        helper h = vector_helper(x->buf, x->lanes);
        if (!base || h == H_COUNT_ || lane_leaf(c, x, 0)) continue;
        c->used[h] = true;
        const char *n = mt_cu_fresh(c, mt_arena_printf(c->a, "%s_v", x->buf->name));
        mt_cu_line_start(c);
        mt_sb_printf(&c->sb, "const %s %s = %s(&%s[", mt_cu_vec_type_name[h - H_LOAD_FLOAT4], n, mt_cu_helper_name[h],
                     mt_cu_name_of(c, x->buf, x->buf->name));
        mt_cu_put_expr(c, base, 0);
        mt_sb_puts(&c->sb, "]);\n");
        mt_cu_vbind b = {x, NULL, field_lanes(c, n, x->buf->dtype, x->lanes)};
        MT_VEC_PUSH(c->a, &c->vb, b);
    }
}

/* The lanes of store s's value: into the fields of a vector (vn), or each
 * straight to its element. */
static void put_store_lanes(mt_cu *c, const mt_tstmt *s, int lanes, const char *vn) {
    const char *dst = mt_cu_name_of(c, s->buf, s->buf->name);
    for (int k = 0; k < lanes; k++) {
        mt_cu_line_start(c);
        if (vn) {
            mt_sb_printf(&c->sb, "%s.%s = ", vn, field(c, lanes, k));
        } else {
            mt_sb_printf(&c->sb, "%s[", dst);
            mt_cu_put_expr(c, mt_arith_lane(c->a, s->idx[0], k, lane_leaf, c), 0);
            mt_sb_puts(&c->sb, "] = ");
        }
        mt_cu_form v = mt_cu_store_form(c, mt_arith_lane(c->a, s->value, k, lane_leaf, c), s->buf->dtype);
        mt_cu_put_form(c, &v, 0);
        mt_sb_puts(&c->sb, ";\n");
    }
}

/* buf[T.Ramp(..)] = vector value, in a C block of its own. */
static void put_vector_store(mt_cu *c, const mt_tstmt *s) {
    if (s->nidx != 1)
        mt_ice("cuda_c: buffer '%s' stored with %d indices: flatten_buffers must run first", s->buf->name,
               s->nidx);
    int lanes = s->idx[0]->lanes > 1 ? s->idx[0]->lanes : s->value->lanes;
    const mt_texpr *base = unit_base(s->idx[0]);
    helper h = base ? vector_helper(s->buf, lanes) : H_COUNT_;
    mt_cu_line(c, "{");
    c->ind += 4;
    int mark = c->nm.open.len, vmark = c->vb.len;
    hoist_loads(c, s->value);
    const char *vn = NULL;
    if (h != H_COUNT_) {
        c->used[h + VECTOR_TYPES] = true;
        vn = mt_cu_fresh(c, mt_arena_printf(c->a, "%s_v", s->buf->name));
        mt_cu_line_start(c);
        mt_sb_printf(&c->sb, "%s %s;\n", mt_cu_vec_type_name[h - H_LOAD_FLOAT4], vn);
    }
    put_store_lanes(c, s, lanes, vn);
    if (vn) {
        mt_cu_line_start(c);
        mt_sb_printf(&c->sb, "%s(&%s[", mt_cu_helper_name[h + VECTOR_TYPES], mt_cu_name_of(c, s->buf, s->buf->name));
        mt_cu_put_expr(c, base, 0);
        mt_sb_printf(&c->sb, "], %s);\n", vn);
    }
    mt_cu_close_names(c, mark);
    c->vb.len = vmark;
    c->ind -= 4;
    mt_cu_line(c, "}");
}

/* let v = vector value: a const per lane (`const float t = ..., t_1 = ...`),
 * in scope for the body. */
static void put_vector_let(mt_cu *c, const mt_tstmt *s, mt_cu_pos p) {
    int vmark = c->vb.len, lanes = s->value->lanes;
    hoist_loads(c, s->value);
    mt_cu_vbind b = {NULL, s->var, MT_NEW_ARRAY(c->a, mt_tvar *, lanes)};
    for (int k = 0; k < lanes; k++) {
        mt_texpr *x = mt_arith_lane(c->a, s->value, k, lane_leaf, c);
        mt_cu_form v = mt_cu_cast_form(c, x, x->dtype, s->var->dtype);
        const char *n = mt_cu_fresh(c, s->var->name);
        mt_cu_line_start(c);
        mt_sb_printf(&c->sb, "const %s %s = ", mt_cu_ctype(s->var->dtype), n);
        mt_cu_put_form(c, &v, 0);
        mt_sb_puts(&c->sb, ";\n");
        b.lane[k] = mt_tvar_new(c->a, s->var->name, s->var->dtype);
        mt_cu_bind(c, b.lane[k], n);
    }
    MT_VEC_PUSH(c->a, &c->vb, b);
    mt_cu_put_stmt(c, s->body, p);
    c->vb.len = vmark;
}

void mt_cu_put_let(mt_cu *c, const mt_tstmt *s, mt_cu_pos p) {
    if (s->value->lanes > 1) {
        put_vector_let(c, s, p);
        return;
    }
    mt_cu_form v = mt_cu_cast_form(c, s->value, s->value->dtype, s->var->dtype);
    const char *n = mt_cu_fresh(c, s->var->name);
    mt_cu_line_start(c);
    mt_sb_printf(&c->sb, "const %s %s = ", mt_cu_ctype(s->var->dtype), n);
    mt_cu_put_form(c, &v, 0);
    mt_sb_puts(&c->sb, ";\n");
    int old = mt_cu_bind(c, s->var, n);
    mt_cu_put_stmt(c, s->body, p);
    mt_cu_unbind(c, s->var, old);
}

/* The number of elements of an allocation (a constant). */
static int64_t alloc_size(const mt_tbuffer *b) {
    int64_t n = 1, d;
    for (int i = 0; i < b->ndim; i++)
        if (!mt_te_is_const_int(b->shape[i], &d) || !mt_mul_ok(n, d, &n))
            mt_ice("cuda_c: buffer '%s' allocated in a kernel has no constant size", b->name);
    return n < 1 ? 1 : n;
}

/* The C type of a fragment buffer's elements: a whole 16 x 16 fragment
 * (of __half or __nv_bfloat16 inputs, float sums). */
static const char *fragment_type(mt_cu *c, mt_scope s, mt_dtype dt) {
    c->wmma = true;
    if (s == MT_SCOPE_WMMA_ACC) return "wmma::fragment<wmma::accumulator, 16, 16, 16, float>";
    return mt_arena_printf(c->a, "wmma::fragment<wmma::matrix_%s, 16, 16, 16, %s, wmma::%s>",
                           s == MT_SCOPE_WMMA_A ? "a" : "b", mt_cu_mem_type(c, dt),
                           s == MT_SCOPE_WMMA_A ? "col_major" : "row_major");
}

void mt_cu_put_alloc(mt_cu *c, const mt_tstmt *s, mt_cu_pos p) {
    const mt_tbuffer *b = s->buf;
    int64_t size = alloc_size(b);
    const char *n = mt_cu_fresh(c, b->name);
    mt_cu_line_start(c);
    if (mt_scope_is_fragment(b->scope))
        mt_sb_printf(&c->sb, "%s %s[%lld];\n", fragment_type(c, b->scope, b->dtype), n, (long long)(size / MT_WMMA_FRAG));
    else
        mt_sb_printf(&c->sb, "%s%s %s[%lld];\n",
                     b->scope != MT_SCOPE_SHARED         ? ""
                     : mt_ptrmap_get(&c->wmma_mem, b) ? "__shared__ __align__(32) "
                                                      : "__shared__ __align__(16) ",
                     mt_cu_mem_type(c, b->dtype), n, (long long)size);
    int old = mt_cu_bind(c, b, n);
    mt_cu_put_stmt(c, s->body, p);
    mt_cu_unbind(c, b, old);
}

/* dst[d + 0 .. n) = name.x, .y, ...: the lanes of a vector copy. */
static void put_lanes(mt_cu *c, const char *dst, const mt_texpr *db, const char *name, int lanes) {
    int64_t d0;
    bool dconst = mt_te_is_const_int(db, &d0);
    for (int i = 0; i < lanes; i++) {
        mt_cu_line_start(c);
        mt_sb_printf(&c->sb, "%s[", dst);
        if (dconst) mt_sb_printf(&c->sb, "%lld", (long long)(d0 + i));
        else {
            mt_cu_put_expr(c, db, C_ADD);
            mt_sb_printf(&c->sb, " + %d", i);
        }
        mt_sb_printf(&c->sb, "] = %s.%c;\n", name, lane_field[i]);
    }
}

/* Is s dst[T.Ramp(d, 1, n)] = src[T.Ramp(s, 1, n)], n 2 or 4, 4-byte
 * elements, src in shared memory (put_vector_copy)? */
static bool shared_vector_copy(const mt_tstmt *s) {
    const mt_texpr *v = s->value;
    mt_dtype t = s->buf->dtype;
    return v->kind == TE_LOAD && v->nargs == 1 && unit_base(v->args[0]) && s->nidx == 1 &&
           unit_base(s->idx[0]) && (v->lanes == 2 || v->lanes == 4) && v->lanes == s->idx[0]->lanes && v->buf->dtype == t &&
           v->buf->scope == MT_SCOPE_SHARED && (t == MT_FLOAT32 || t == MT_INT32);
}

/* A shared_vector_copy, src in shared memory (__align__(16)): one n-wide
 * load (the schedule guarantees that s is a multiple of n), then n scalar
 * stores, so that a local dst stays in registers. */
static void put_vector_copy(mt_cu *c, const mt_tstmt *s) {
    const mt_texpr *v = s->value;
    const mt_texpr *sb = unit_base(v->args[0]), *db = unit_base(s->idx[0]);
    mt_dtype t = s->buf->dtype;
    const char *vt = mt_arena_printf(c->a, "%s%d", t == MT_FLOAT32 ? "float" : "int", v->lanes);
    mt_cu_line_start(c);
    mt_sb_puts(&c->sb, "{\n");
    c->ind += 4;
    int mark = c->nm.open.len;
    const char *src = mt_cu_name_of(c, v->buf, v->buf->name), *dst = mt_cu_name_of(c, s->buf, s->buf->name);
    const char *n = mt_cu_fresh(c, "vec");
    mt_cu_line_start(c);
    mt_sb_printf(&c->sb, "const %s %s = *(const %s *)&%s[", vt, n, vt, src);
    mt_cu_put_expr(c, sb, 0);
    mt_sb_puts(&c->sb, "];\n");
    put_lanes(c, dst, db, n, v->lanes);
    mt_cu_close_names(c, mark);
    c->ind -= 4;
    mt_cu_line_start(c);
    mt_sb_puts(&c->sb, "}\n");
}

/* off / 256 read off its form (a constant, x * 256k, a sum of those), or NULL. */
static mt_texpr *frag_number(mt_cu *c, mt_texpr *off) {
    int64_t v;
    if (mt_te_is_const_int(off, &v)) return v % MT_WMMA_FRAG ? NULL : mt_te_i64(c->a, v / MT_WMMA_FRAG);
    if (off->kind == TE_MUL && mt_te_is_const_int(off->b, &v) && v % MT_WMMA_FRAG == 0)
        return v == MT_WMMA_FRAG ? off->a : mt_arith_bin(c->a, TE_MUL, off->a, mt_te_i64(c->a, v / MT_WMMA_FRAG));
    if (off->kind != TE_ADD) return NULL;
    mt_texpr *x = frag_number(c, off->a), *y = x ? frag_number(c, off->b) : NULL;
    return y ? mt_arith_bin(c->a, TE_ADD, x, y) : NULL;
}

/* A wmma argument: fragment f as name[f] (its offset / 256), else an
 * address, &name[offset]. */
static void put_wmma_arg(mt_cu *c, const mt_texpr *x) {
    const char *n = mt_cu_name_of(c, x->buf, x->buf->name);
    bool frag = mt_scope_is_fragment(x->buf->scope);
    mt_texpr *ix = x->args[0], *f = frag ? frag_number(c, ix) : NULL;
    if (frag) ix = f ? f : mt_arith_bin(c->a, TE_FLOORDIV, ix, mt_te_i64(c->a, MT_WMMA_FRAG));
    mt_sb_printf(&c->sb, "%s%s[", frag ? "" : "&", n);
    mt_cu_put_expr(c, ix, 0);
    mt_sb_putc(&c->sb, ']');
}

/* T.wmma_*(...) (tir.h) as the WMMA API's calls; a store is a warp
 * barrier on both sides (__syncwarp: lanes may still read what it
 * overwrites, and read what it stores right after). */
void mt_cu_put_wmma(mt_cu *c, const mt_texpr *e) {
    static const char *const fn[] = {"fill_fragment", "load_matrix_sync", "load_matrix_sync", "mma_sync",
                                     "store_matrix_sync"};
    int k = (int)(e->intrin - IN_WMMA_FILL);
    if (e->intrin == IN_WMMA_STORE) mt_cu_line(c, "__syncwarp();");
    mt_cu_line_start(c);
    mt_sb_printf(&c->sb, "wmma::%s(", fn[k]);
    int naddr = e->intrin == IN_WMMA_MMA ? 3 : 2;
    for (int i = 0; i < naddr; i++) {
        if (i) mt_sb_puts(&c->sb, ", ");
        if (e->intrin == IN_WMMA_FILL && i == 1) mt_cu_put_expr(c, e->args[1], 0);
        else put_wmma_arg(c, e->args[i]);
    }
    if (e->intrin == IN_WMMA_MMA) {
        mt_sb_puts(&c->sb, ", ");
        put_wmma_arg(c, e->args[0]);
    }
    if (naddr == 2 && e->nargs == 3) mt_sb_printf(&c->sb, ", %lld", (long long)e->args[2]->ival);
    if (e->intrin == IN_WMMA_STORE) mt_sb_puts(&c->sb, ", wmma::mem_row_major");
    mt_sb_puts(&c->sb, ");\n");
    if (e->intrin == IN_WMMA_STORE) mt_cu_line(c, "__syncwarp();");
}

void mt_cu_put_store(mt_cu *c, const mt_tstmt *s) {
    const mt_tbuffer *b = s->buf;
    if (s->value->lanes > 1 || (s->nidx == 1 && s->idx[0]->lanes > 1)) {
        if (shared_vector_copy(s)) put_vector_copy(c, s);
        else put_vector_store(c, s);
        return;
    }
    if (s->nidx > 1)
        mt_ice("cuda_c: buffer '%s' stored with %d indices: flatten_buffers must run first",
               b->name, s->nidx);
    mt_cu_line_start(c);
    mt_sb_printf(&c->sb, "%s[", mt_cu_name_of(c, b, b->name));
    if (s->nidx) mt_cu_put_expr(c, s->idx[0], 0);
    else mt_sb_putc(&c->sb, '0');
    mt_sb_puts(&c->sb, "] = ");
    mt_cu_form v = mt_cu_store_form(c, s->value, b->dtype);
    mt_cu_put_form(c, &v, 0);
    mt_sb_puts(&c->sb, ";\n");
}
