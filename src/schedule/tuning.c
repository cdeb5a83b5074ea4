/*
 * tuning.c -- tuning logs (tuning.h): a reader for exactly their JSON, the
 * writer, the workload key and applying a log to a function.
 *
 * The reader is a recursive-descent parser for one record per line:
 *
 *   record := '{' member (',' member)* '}'
 *   member := string ':' value
 *   value  := string | number | '{' [string ':' integer (',' string ':' integer)*] '}'
 *
 * with JSON's whitespace and string escapes (\" \\ \/ \b \f \n \r \t; \u
 * below 0x80). Members may come in any order; "workload", "target",
 * "rule" and "knobs" are required, "func", "ms" and "default_ms" optional,
 * other members are skipped (a later version may add some). Anything else
 * -- a line that is not one object, a missing member, a knob that is not
 * an integer, a knob its rule does not have or a value out of its range
 * (mt_knobs_check) -- is an error at that line and column: a log is read
 * whole or not at all, never half applied.
 *
 * The workload key is the first 128 bits of BLAKE2s over the function's
 * canonical text (tir/printer.c: names by order of appearance), so two
 * functions that print alike up to names share a key.
 */
#include "schedule/tuning.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "support/blake2s.h"
#include "support/common.h"
#include "support/cnum.h"
#include "support/strbuf.h"
#include "target/target.h"

/* ---- reading ------------------------------------------------------------------ */

typedef struct rd {
    mt_arena *a;
    const char *line, *p, *end; /* the line [line, end) and the cursor */
    mt_tuning_error *err;
    int lineno;
    bool failed;
} rd;

static bool fail(rd *r, const char *fmt, const char *what) {
    if (r->failed) return false;
    r->failed = true;
    r->err->line = r->lineno;
    r->err->col = (int)(r->p - r->line) + 1;
    mt_c_snprintf(r->err->msg, sizeof r->err->msg, fmt, what);
    return false;
}

static void ws(rd *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r')) r->p++;
}

static bool expect(rd *r, char ch) {
    ws(r);
    if (r->p < r->end && *r->p == ch) {
        r->p++;
        return true;
    }
    char s[2] = {ch, 0};
    return fail(r, "tuning log: '%s' expected", s);
}

/* string := '"' chars '"' */
static const char *string(rd *r) {
    ws(r);
    if (r->p >= r->end || *r->p != '"') return fail(r, "tuning log: %s expected", "a string"), NULL;
    mt_sb sb;
    mt_sb_init(&sb, r->a);
    for (r->p++; r->p < r->end && *r->p != '"'; r->p++) {
        if (*r->p != '\\') {
            mt_sb_putc(&sb, *r->p);
            continue;
        }
        if (++r->p >= r->end) break;
        const char *esc = strchr("\"\\/bfnrt", *r->p);
        if (esc && *r->p) {
            mt_sb_putc(&sb, "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"]);
        } else if (*r->p == 'u' && r->end - r->p > 4) {
            char hex[5] = {r->p[1], r->p[2], r->p[3], r->p[4], 0};
            char *e;
            long v = strtol(hex, &e, 16);
            if (*e || v <= 0 || v >= 0x80) return fail(r, "tuning log: %s", "unsupported \\u escape"), NULL;
            mt_sb_putc(&sb, (char)v);
            r->p += 4;
        } else {
            return fail(r, "tuning log: %s", "bad escape in a string"), NULL;
        }
    }
    if (r->p >= r->end) return fail(r, "tuning log: %s", "unterminated string"), NULL;
    r->p++;
    return mt_sb_str(&sb);
}

static bool number(rd *r, double *out) {
    ws(r);
    char buf[64];
    size_t n = 0;
    while (r->p + n < r->end && n < sizeof buf && strchr("+-0123456789.eE", r->p[n]) && r->p[n]) n++;
    if (n == sizeof buf) return fail(r, "tuning log: %s", "a number of more than 63 characters");
    memcpy(buf, r->p, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    *out = mt_c_strtod(buf, &e);
    if (n == 0 || *e || errno) return fail(r, "tuning log: %s expected", "a number");
    r->p += n;
    return true;
}

static bool integer(rd *r, int64_t *out) {
    ws(r);
    const char *at = r->p;
    double d;
    if (!number(r, &d)) return false;
    for (const char *q = at; q < r->p; q++)
        if (*q == '.' || *q == 'e' || *q == 'E') {
            r->p = at;
            return fail(r, "tuning log: %s expected", "an integer knob value");
        }
    errno = 0;
    *out = strtoll(at, NULL, 10);
    if (errno == ERANGE) return r->p = at, fail(r, "tuning log: %s", "a knob value beyond 64 bits");
    return true;
}

/* '{' [string ':' integer (',' ...)*] '}' */
static bool knobs(rd *r, mt_knobs *k) {
    if (!expect(r, '{')) return false;
    ws(r);
    if (r->p < r->end && *r->p == '}') return r->p++, true;
    do {
        ws(r);
        const char *at = r->p, *name = string(r);
        int64_t v;
        if (!name || !expect(r, ':') || !integer(r, &v)) return false;
        for (int i = 0; i < k->n; i++)
            if (!strcmp(k->kv[i].name, name)) return r->p = at, fail(r, "tuning log: knob '%s' given twice", name);
        if (!mt_knobs_set(k, name, v)) return fail(r, "tuning log: %s", "too many knobs");
        ws(r);
    } while (r->p < r->end && *r->p == ',' && r->p++);
    return expect(r, '}');
}

/* Skips a value of another member (a string or a number). */
static bool skip_value(rd *r) {
    ws(r);
    double d;
    if (r->p < r->end && *r->p == '"') return string(r) != NULL;
    return number(r, &d);
}

static bool member(rd *r, mt_tuning_record *rec, unsigned *seen) {
    ws(r);
    const char *at = r->p, *key = string(r);
    if (!key || !expect(r, ':')) return false;
    static const char *const once[] = {"workload", "target", "rule", "knobs", "func", "ms", "default_ms"};
    for (unsigned i = 0; i < sizeof once / sizeof once[0]; i++)
        if (!strcmp(key, once[i]) && (*seen >> (4 + i) & 1)) return r->p = at, fail(r, "tuning log: \"%s\" given twice", key);
        else if (!strcmp(key, once[i])) *seen |= 1u << (4 + i);
    if (!strcmp(key, "workload")) {
        ws(r);
        const char *at = r->p, *w = string(r);
        if (!w) return false;
        if (strlen(w) != MT_WORKLOAD_KEY_CHARS || strspn(w, "0123456789abcdef") != strlen(w))
            return r->p = at, fail(r, "tuning log: %s", "workload is not a key of 32 hex digits");
        memcpy(rec->workload, w, MT_WORKLOAD_KEY_CHARS + 1);
        *seen |= 1;
    } else if (!strcmp(key, "target")) {
        if (!(rec->target = string(r))) return false;
        *seen |= 2;
    } else if (!strcmp(key, "rule")) {
        if (!(rec->knobs.rule = string(r))) return false;
        *seen |= 4;
    } else if (!strcmp(key, "knobs")) {
        if (!knobs(r, &rec->knobs)) return false;
        *seen |= 8;
    } else if (!strcmp(key, "func")) {
        if (!(rec->func = string(r))) return false;
    } else if (!strcmp(key, "ms")) {
        return number(r, &rec->ms);
    } else if (!strcmp(key, "default_ms")) {
        return number(r, &rec->default_ms);
    } else {
        return skip_value(r);
    }
    return true;
}

static const char *const required[] = {"workload", "target", "rule", "knobs"};

/* One non-empty line: record := '{' member (',' member)* '}' */
static bool record(rd *r, mt_tuning_record *rec) {
    memset(rec, 0, sizeof *rec);
    rec->ms = rec->default_ms = -1;
    rec->line = r->lineno;
    unsigned seen = 0;
    const char *rule_at = NULL;
    if (!expect(r, '{')) return false;
    do {
        ws(r);
        if (r->p < r->end && r->p[0] == '"' && !strncmp(r->p, "\"rule\"", 6)) rule_at = r->p;
        if (!member(r, rec, &seen)) return false;
        ws(r);
    } while (r->p < r->end && *r->p == ',' && r->p++);
    if (!expect(r, '}')) return false;
    ws(r);
    if (r->p < r->end) return fail(r, "tuning log: %s", "one record per line (text after '}')");
    for (int i = 0; i < 4; i++)
        if (!(seen & (1u << i))) return r->p = r->line, fail(r, "tuning log: the record has no \"%s\"", required[i]);
    char buf[200];
    const char *bad = mt_knobs_check(&rec->knobs, buf, sizeof buf);
    if (bad) {
        r->p = rule_at ? rule_at : r->line;
        return fail(r, "tuning log: %s", bad);
    }
    return true;
}

bool mt_tuning_parse(mt_arena *a, const char *text, const char *file, mt_tuning_log *log,
                     mt_tuning_error *err) {
    memset(log, 0, sizeof *log);
    log->file = file;
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        rd r = {a, p, p, end, err, ++lineno, false};
        ws(&r);
        if (r.p < end) {
            mt_tuning_record rec;
            if (!record(&r, &rec)) return false;
            mt_tuning_put(a, log, &rec);
        }
        p = nl ? nl + 1 : end;
    }
    return true;
}

/* ---- the log in memory ---------------------------------------------------------- */

static uint64_t rec_hash(const char *workload, const char *target) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = workload; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    for (const char *p = target; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

/* The slot of (workload, target): its record's, or the empty one to take. */
static int *find_slot(const mt_tuning_log *log, const char *workload, const char *target) {
    for (uint64_t i = rec_hash(workload, target);; i++) {
        int *s = &log->slot[i & (uint64_t)(log->nslot - 1)];
        const mt_tuning_record *r = *s ? &log->recs[*s - 1] : NULL;
        if (!r || (!strcmp(r->workload, workload) && !strcmp(r->target, target))) return s;
    }
}

const mt_tuning_record *mt_tuning_find(const mt_tuning_log *log, const char *workload,
                                       const char *target) {
    if (!log || !log->nslot) return NULL;
    int *s = find_slot(log, workload, target);
    return *s ? &log->recs[*s - 1] : NULL;
}

static void reindex(mt_arena *a, mt_tuning_log *log, int nslot) {
    log->slot = MT_NEW_ARRAY(a, int, nslot);
    log->nslot = nslot;
    for (int i = 0; i < log->n; i++) *find_slot(log, log->recs[i].workload, log->recs[i].target) = i + 1;
}

void mt_tuning_put(mt_arena *a, mt_tuning_log *log, const mt_tuning_record *rec) {
    mt_tuning_record *old = (mt_tuning_record *)mt_tuning_find(log, rec->workload, rec->target);
    if (old) {
        *old = *rec;
        return;
    }
    if (log->n == log->cap) {
        int cap = log->cap ? 2 * log->cap : 8;
        mt_tuning_record *nr = MT_NEW_ARRAY(a, mt_tuning_record, cap);
        if (log->n) memcpy(nr, log->recs, sizeof *nr * (size_t)log->n);
        log->recs = nr;
        log->cap = cap;
    }
    log->recs[log->n++] = *rec;
    if (2 * log->n > log->nslot) reindex(a, log, log->nslot ? 2 * log->nslot : 16);
    else *find_slot(log, rec->workload, rec->target) = log->n;
}

/* ---- writing -------------------------------------------------------------------- */

static void put_json_string(mt_sb *sb, const char *s) {
    mt_sb_putc(sb, '"');
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') mt_sb_printf(sb, "\\%c", ch);
        else if (ch < 0x20) mt_sb_printf(sb, "\\u%04x", ch);
        else mt_sb_putc(sb, (char)ch);
    }
    mt_sb_putc(sb, '"');
}

const char *mt_tuning_record_json(mt_arena *a, const mt_tuning_record *rec) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_puts(&sb, "{\"workload\": ");
    put_json_string(&sb, rec->workload);
    mt_sb_puts(&sb, ", \"target\": ");
    put_json_string(&sb, rec->target);
    mt_sb_puts(&sb, ", \"func\": ");
    put_json_string(&sb, rec->func ? rec->func : "");
    mt_sb_puts(&sb, ", \"rule\": ");
    put_json_string(&sb, rec->knobs.rule);
    mt_sb_puts(&sb, ", \"knobs\": {");
    for (int i = 0; i < rec->knobs.n; i++) {
        if (i) mt_sb_puts(&sb, ", ");
        put_json_string(&sb, rec->knobs.kv[i].name);
        mt_sb_printf(&sb, ": %lld", (long long)rec->knobs.kv[i].value);
    }
    mt_sb_puts(&sb, "}");
    if (rec->ms >= 0) mt_sb_printf(&sb, ", \"ms\": %.6g", rec->ms);
    if (rec->default_ms >= 0) mt_sb_printf(&sb, ", \"default_ms\": %.6g", rec->default_ms);
    mt_sb_puts(&sb, "}\n");
    return mt_sb_str(&sb);
}

/* ---- keys and applying ---------------------------------------------------------- */

void mt_workload_key(mt_arena *a, const mt_tfunc *f, char out[MT_WORKLOAD_KEY_CHARS + 1]) {
    const char *text = mt_tfunc_print_canonical(a, f);
    uint8_t d[MT_BLAKE2S_BYTES];
    mt_blake2s_hash(text, strlen(text), d);
    for (int i = 0; i < MT_WORKLOAD_KEY_CHARS / 2; i++) mt_c_snprintf(out + 2 * i, 3, "%02x", d[i]);
}

mt_tfunc *mt_tuning_apply(mt_arena *a, mt_tfunc *f, const mt_tuning_log *log) {
    if (!log || log->n == 0) return f;
    char key[MT_WORKLOAD_KEY_CHARS + 1], target[256];
    mt_workload_key(a, f, key);
    mt_target_str(mt_tfunc_target(f), target, sizeof target);
    const mt_tuning_record *rec = mt_tuning_find(log, key, target);
    if (!rec || rec->knobs.n == 0) return f;
    mt_knobs *k = MT_NEW(a, mt_knobs); /* a's own: the log is read into an arena of its own */
    *k = rec->knobs;
    k->rule = mt_arena_strdup(a, rec->knobs.rule);
    for (int i = 0; i < k->n; i++) k->kv[i].name = mt_arena_strdup(a, rec->knobs.kv[i].name);
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->knobs = k;
    return g;
}
