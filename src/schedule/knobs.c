/*
 * knobs.c -- the knob tables of the CPU rules and reading knobs (knobs.h).
 *
 * The tables are the search space of the tuner (src/tune.c) and the
 * validity check of a tuning log: a value in [lo, hi] (a power of two where
 * pow2 says so) must give a correct kernel, whatever its speed. The rules
 * read the knobs with mt_knob_get(); docs/schedule.md ("Knobs") describes each.
 * A knob the rule computes from the target and the shapes (the tile rows
 * from the vector registers, the column block from L2) has that computed
 * value as its default; the candidates are the alternatives tried.
 */
#include "schedule/knobs.h"

#include <stdio.h>
#include <string.h>

#include "support/common.h"
#include "support/strbuf.h"

static const mt_knob_def matmul_knobs[] = {
    {"mr", 1, 16, false, 5, {2, 4, 6, 8, 12}, "rows of the register tile (default: 8, or what fits the registers, or fewer to cut M better)"},
    {"nv", 1, 4, false, 3, {1, 2, 3}, "vector registers per tile row: NR = nv x lanes (default 2)"},
    {"kc", 16, 1 << 20, false, 4, {128, 256, 512, 1024}, "depth of a K block when K > 2 kc (default 512)"},
    {"nc", 16, 1 << 20, false, 5, {128, 256, 512, 1024, 2048},
     "columns of a packed block of B, rounded down to a multiple of NR (default 512, narrowed to fit the target's L2)"},
    {"parallel", 0, 1, false, 2, {0, 1}, "row blocks and packing across threads (default 1; 0 for regions too small for the cores)"},
    {"pack_rows", 1, 64, true, 3, {2, 4, 16}, "rows of a row-major B copied together into its packed block (default 8)"},
    {"par_cols", 0, 1, false, 2, {0, 1},
     "1: a constant N's column blocks across threads, each packed by its own thread (default 1 for few rows of a row-major B)"},
    {"pack_a", 0, 1, false, 2, {0, 1},
     "1: A packed whole once per call, [row block][k][row] (default 1 for a transposed A, a.T @ b, of at most 32 MiB)"},
    {"few_rows", 0, 4096, false, 6, {0, 8, 16, 32, 64, 128},
     "M below which the few-rows schedules (rule_gemv.c, rule_matvec.c) are used (default 16 for x @ w, 12 for x @ w.T)"},
    {"gemv_kb", 1, 16, false, 3, {2, 4, 8}, "few rows: rows of w per sweep (default 8 when a group of 4 rows or more is one register tile, else 4)"},
    {"gemv_mr", 1, 64, false, 4, {4, 8, 16, 32}, "few rows: rows of x per group (default 16)"},
    {"prefetch", 0, 1, false, 2, {0, 1},
     "column blocks across threads with K one block: 1 prefetches the next block of B during this one's tiles (default 1 for the conv rule's 1x1 layers, whose knob prefetch sets it)"},
    {"gemv_nb", 16, 1 << 20, false, 4, {256, 512, 1024, 4096},
     "few rows: columns of a band, rounded down to a multiple of the tile (default: a group's sums within a third of L1)"},
    {"gemv_pf", 0, 64, false, 3, {0, 4, 16}, "few rows: rows of w ahead that a sweep prefetches (default gemv_kb: the next sweep's; 0: none)"},
    {"primitives", 0, 1, false, 2, {0, 1},
     "1: the packed and matrix-vector schedules as traces of primitives where they say them exactly (A @ B alone, more than 128 rows, whole tiles and blocks; x @ w.T of few rows, whole blocks of 8 columns); 0: lowered form (default 1)"},
    {"gemv_parts", 1, 64, false, 3, {1, 2, 4}, "few rows: parts of K, each its chunks' partial sums, added after (default: the cores when the bands alone do not divide among them, else 1)"},
    {"pack_b", 0, 1, false, 2, {0, 1},
     "column blocks across threads, a row-major B: 0 reads B in place, without the copy into panels (default 0 for the conv rule's 1x1 layers when they prefetch, whose knob pack_b sets it; else 1)"},
};

static const mt_knob_def conv_knobs[] = {
    {"mr", 1, 16, false, 3, {2, 4, 8}, "output channels of the register tile (default: what fits the registers, 6 with AVX2)"},
    {"nv", 1, 4, false, 2, {1, 3}, "vector registers of output columns per tile row (default 2)"},
    {"parallel", 0, 1, false, 2, {0, 1}, "output rows (column chunks, images) across threads (default 1)"},
    {"pointwise", 0, 1, false, 2, {0, 1},
     "1: a 1x1 layer (one group, no padding) as a matmul per image through the matmul rule (default 1 where it applies)"},
    {"prefetch", 0, 1, false, 2, {0, 1},
     "a 1x1 layer through the matmul rule: 1 prefetches the next column block's input during this one's tiles (default 1)"},
    {"pack_b", 0, 1, false, 2, {0, 1},
     "a 1x1 layer through the matmul rule: 1 copies each column block's input into panels first; 0 reads it in place (default 0 when it prefetches)"},
};

static const mt_knob_def reduce_knobs[] = {
    {"accumulators", 1, 8, false, 3, {1, 2, 8},
     "vector accumulators per reduction (default 4, at most the vectors of a row; argmax / argmin: sets of (value, index) "
     "pairs, default 2)"},
    {"lanes", 1, 64, true, 3, {4, 8, 16}, "lanes of a vector (default: the target's, 16 float32; fewer for a short row)"},
    {"parallel", 0, 1, false, 2, {0, 1}, "rows in parallel chunks (default 1 above 64 KiB)"},
    {"chunk_kib", 1, 1 << 20, false, 4, {8, 16, 32, 256}, "KiB of rows per parallel chunk (default 64; down to 8 for 8 chunks per core)"},
    {"prefetch", 0, 1, false, 2, {0, 1},
     "1: the second pass over a row prefetches the next row's input (default 1 for rows of 512 B to L2 / 16 -- L2 / 2 "
     "when that pass computes an expanded function (exp, log, tanh, ...) and stores nothing, as log_softmax's, L1 / 4 when it stores a row, as "
     "softmax's -- of an input larger than L2, in more than one pass)"},
    {"block_rows", 1, 64, false, 3, {1, 4, 16},
     "rows per block: each pass over all of a block's rows before the next pass (1: row by row; default 16 for rows "
     "of 16 to 512 bytes in more than one pass, fewer for a block over L1 / 4, down to 4; else 1; argmax / argmin: above 1, "
     "L rows in the lanes of a vector, the default for rows of a multiple of L up to 64 elements)"},
    {"primitives", 0, 1, false, 2, {0, 1},
     "1: one reduction over the row (sum, max, min, mean) as a trace of primitives (rfactor, compute_at, vectorize, ...) "
     "where they say it exactly; 0: lowered form (default 1)"},
};

static const mt_knob_def default_knobs[] = {
    {"chunk_kib", 1, 1 << 20, false, 5, {8, 16, 32, 128, 512},
     "KiB of output per parallel chunk of an elementwise nest (default 64)"},
    {"parallel", 0, 1, false, 2, {0, 1}, "elementwise nests in parallel chunks (default 1)"},
    {"transpose_band", 0, 1 << 16, false, 4, {0, 512, 1024, 4096},
     "transposes: a band of tiles' width along the input rows, in bytes of the output's elements, the band going down all rows before the next (0: one band; default 256)"},
};

static const mt_knob_def gpu_matmul_knobs[] = {
    {"tile", 32, 128, true, 3, {32, 64, 128},
     "rows and columns of C a block computes: 128 (8 x 8 a thread), 64 (4 x 4) or 32 (2 x 2) (default: the largest "
     "whose grid keeps the SMs busy)"},
    {"split_k", 1, 8, false, 3, {1, 2, 4},
     "splits of K, each a block's partial sums, added by a second kernel (SIMT, not tensor cores; constant shapes, no batch; "
     "default: SMs / blocks when the tiles leave half the SMs idle, else 1)"},
};

static const mt_knob_def gpu_gemv_knobs[] = {
    {"threads", 32, 1024, true, 3, {64, 128, 512},
     "threads of a block, at most the target's limit (default 256)"},
    {"slices", 1, 1024, true, 4, {4, 16, 32, 64},
     "k-slices of a column: threads that sum one column's k in turn, at most threads (default 32 for x @ w.T, "
     "8 for x @ w)"},
};

static const mt_knob_def gpu_reduce_knobs[] = {
    {"threads", 32, 512, true, 5, {32, 64, 128, 256, 512},
     "threads of the block that takes a row, at least a warp, at most the target's limit (default N / 4 rounded down "
     "to a power of two; 256 for a symbolic N)"},
    {"warp_rows", 0, 1, false, 2, {0, 1},
     "1: short rows many enough to fill the GPU take a group of lanes of one warp each (default 1)"},
};

#define TABLE(r, t) {r, t, (int)(sizeof t / sizeof t[0])}
static const mt_rule_knobs tables[] = {
    TABLE("schedule_matmul", matmul_knobs),
    TABLE("schedule_reduce", reduce_knobs),
    TABLE("schedule_conv", conv_knobs),
    TABLE("schedule", default_knobs),
    TABLE("gpu_matmul", gpu_matmul_knobs),
    TABLE("gpu_gemv", gpu_gemv_knobs),
    TABLE("gpu_reduce_rows", gpu_reduce_knobs),
    TABLE("gpu_argreduce_rows", gpu_reduce_knobs),
};

const mt_rule_knobs *mt_knob_space(const char *rule) {
    for (size_t i = 0; rule && i < sizeof tables / sizeof tables[0]; i++)
        if (strcmp(tables[i].rule, rule) == 0) return &tables[i];
    return NULL;
}

static const mt_knob_def *find_def(const mt_rule_knobs *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->defs[i].name, name) == 0) return &t->defs[i];
    return NULL;
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

const char *mt_knobs_check(const mt_knobs *k, char *buf, size_t cap) {
    const mt_rule_knobs *t = mt_knob_space(k->rule);
    if (!t) {
        snprintf(buf, cap, "rule '%s' has no knobs (known: " MT_KNOB_RULES ")",
                 k->rule ? k->rule : "");
        return buf;
    }
    for (int i = 0; i < k->n; i++) {
        const mt_knob_def *d = find_def(t, k->kv[i].name);
        int64_t v = k->kv[i].value;
        if (!d) {
            snprintf(buf, cap, "rule %s has no knob '%s'", t->rule, k->kv[i].name);
            return buf;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(k->kv[j].name, d->name) == 0) {
                snprintf(buf, cap, "knob '%s' given twice", d->name);
                return buf;
            }
        if (v < d->lo || v > d->hi || (d->pow2 && !is_pow2(v))) {
            snprintf(buf, cap, "knob '%s' of rule %s: %lld is not %sin %lld..%lld", d->name, t->rule,
                     (long long)v, d->pow2 ? "a power of two " : "", (long long)d->lo, (long long)d->hi);
            return buf;
        }
    }
    return NULL;
}

bool mt_knobs_set(mt_knobs *k, const char *name, int64_t value) {
    for (int i = 0; i < k->n; i++)
        if (strcmp(k->kv[i].name, name) == 0) {
            k->kv[i].value = value;
            return true;
        }
    if (k->n == MT_KNOBS_MAX) return false;
    k->kv[k->n].name = name;
    k->kv[k->n].value = value;
    k->n++;
    return true;
}

static const mt_knob *find(const mt_knobs *k, const char *name) {
    for (int i = 0; k && i < k->n; i++)
        if (strcmp(k->kv[i].name, name) == 0) return &k->kv[i];
    return NULL;
}

static const mt_knob *given(const mt_tfunc *f, const char *rule, const char *name) {
    const mt_knobs *k = f->knobs;
    if (!k || !k->rule || strcmp(k->rule, rule) != 0) return NULL;
    return find(k, name);
}

int64_t mt_knobs_value(const mt_knobs *k, const char *name, int64_t dflt) {
    const mt_knob *v = find(k, name);
    return v ? v->value : dflt;
}

int64_t mt_knob_get(const mt_tfunc *f, const char *rule, const char *name, int64_t dflt) {
    const mt_knob *v = given(f, rule, name);
    return v ? v->value : dflt;
}

bool mt_knob_given(const mt_tfunc *f, const char *rule, const char *name) {
    return given(f, rule, name) != NULL;
}

const char *mt_knobs_str(mt_arena *a, const mt_knobs *k) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    const mt_rule_knobs *t = mt_knob_space(k->rule);
    bool first = true;
    for (int d = 0; t && d < t->n; d++)
        for (int i = 0; i < k->n; i++) {
            if (strcmp(k->kv[i].name, t->defs[d].name) != 0) continue;
            mt_sb_printf(&sb, "%s%s=%lld", first ? "" : " ", k->kv[i].name, (long long)k->kv[i].value);
            first = false;
        }
    return mt_sb_str(&sb);
}

mt_tfunc *mt_knobs_mark(mt_arena *a, mt_tfunc *g, const mt_tfunc *f, const char *rule) {
    const mt_knobs *k = f->knobs;
    if (!k || !k->rule || strcmp(k->rule, rule) != 0) return g;
    mt_tattr *own = MT_NEW_ARRAY(a, mt_tattr, g->nattrs + 1);
    if (g->nattrs) memcpy(own, g->attrs, sizeof *own * (size_t)g->nattrs);
    g->attrs = own; /* set_attr may replace a value in place */
    mt_tfunc_set_attr(a, g, "knobs", mt_knobs_str(a, k));
    return g;
}

mt_tfunc *mt_knobs_chose(mt_arena *a, mt_tfunc *g, const mt_knobs *k) {
    if (!k) return g;
    mt_knobs *own = MT_NEW(a, mt_knobs);
    *own = *k;
    g->chosen = own;
    return g;
}

const char *mt_knobs_call(mt_arena *a, const mt_knobs *k) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_printf(&sb, "sch.apply_rule(\"%s\"", k->rule);
    const mt_rule_knobs *t = mt_knob_space(k->rule);
    for (int d = 0; t && d < t->n; d++)
        for (int i = 0; i < k->n; i++)
            if (strcmp(k->kv[i].name, t->defs[d].name) == 0)
                mt_sb_printf(&sb, ", %s=%lld", k->kv[i].name, (long long)k->kv[i].value);
    mt_sb_putc(&sb, ')');
    return mt_sb_str(&sb);
}
