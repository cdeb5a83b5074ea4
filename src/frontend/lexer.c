/*
 * lexer.c -- source text to tokens (see lexer.h, token.h, docs/frontend.md).
 *
 * One pass over the bytes, hand written, in the manner of CPython's
 * tokenizer. The whole source is tokenized up front into one arena array, so
 * the parser can look ahead freely and never calls back into the lexer.
 *
 * Lines. Python's block structure is carried by three synthetic tokens:
 * TK_NEWLINE ends a logical line, TK_INDENT / TK_DEDENT open and close a
 * block. At the start of each physical line outside brackets the lexer
 * measures the leading spaces. A line holding only spaces, tabs and perhaps a
 * comment is blank: it produces nothing at all. Otherwise its indentation is
 * compared with a stack of the open levels: deeper pushes a level and emits
 * one INDENT; shallower pops levels, one DEDENT each, and must land exactly
 * on an outer level ("unindent does not match any outer indentation level").
 * A tab inside the indentation of a non-blank line is an error: mixing tabs
 * and spaces is the classic source of invisible block errors, and Python
 * itself only tolerates it under rules nobody remembers.
 *
 * A newline inside (), [] or {} is implicit line joining: it is skipped like
 * a space, and so is the indentation of the next line. A backslash right
 * before a newline joins explicitly. The stack of open brackets also gives
 * the errors that name both ends: a closer that matches nothing, a closer of
 * the wrong kind ("closing ']' does not match '(' at 3:9"), or the end of the
 * file with a bracket still open.
 *
 * At the end of the input the lexer emits the NEWLINE of an unfinished last
 * line, one DEDENT per open level, then TK_EOF; so the parser always sees
 * balanced INDENT/DEDENT and every statement ends in NEWLINE.
 *
 * Literals. Integers are decimal, 0x, 0o or 0b, with single underscores
 * between digits, and must fit in int64. Floats follow Python's grammar
 * (1.5 .5 1. 1e-5 1_0.5) and are converted in the C locale (support/cnum.h), so
 * a host program that set a comma locale still reads "1.5" right. Strings use
 * ' or ", or triple quotes (which may span lines); the escapes are \n \t \r
 * \\ \' \" and backslash-newline; the decoded value goes in the arena. A NUL
 * byte anywhere is an invalid character, so decoded strings are C strings.
 *
 * Robustness: every read is guarded by the length (src need not be
 * NUL-terminated), every error goes through mt_fail, and all memory comes
 * from the arena, so arbitrary bytes either tokenize or fail cleanly.
 */
#include "frontend/lexer.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "support/cnum.h"
#include "support/strbuf.h"

#define DEFAULT_MAX_SOURCE ((size_t)16 << 20)
#define DEFAULT_MAX_TOKENS 1000000
#define DEFAULT_MAX_INDENT 100

static const char *const tok_spelling[] = {
#define MT_X_(k, s) s,
    MT_TOKEN_LIST(MT_X_)
#undef MT_X_
};

const char *mt_tok_kind_str(mt_tok_kind k) {
    if ((unsigned)k >= (unsigned)TK_COUNT_) return "?";
    return tok_spelling[k];
}

/* A bracket that is still open. */
typedef struct open_bracket {
    char ch;    /* '(', '[' or '{' */
    mt_loc loc; /* where it was opened */
} open_bracket;

typedef struct lexer {
    mt_arena *arena;
    const char *src;         /* the source, not necessarily NUL-terminated */
    size_t len;              /* bytes in src */
    size_t pos;              /* next byte to read */
    int line;                /* line of src[pos], 1-based */
    size_t line_start;       /* offset of the first byte of that line */
    MT_VEC(mt_token) toks;   /* the output */
    int max_tokens;          /* limit on toks.len */
    MT_VEC(int) indents;     /* open indentation levels in columns; [0] = 0 */
    int max_indent;          /* limit on levels beyond the first */
    MT_VEC(open_bracket) brackets; /* open brackets, innermost last */
    bool line_has_tokens;    /* the current logical line has a token */
} lexer;

static mt_loc loc_at(const lexer *L, size_t pos) {
    return mt_loc_make(L->line, (int)(pos - L->line_start) + 1);
}

static int byte_at(const lexer *L, size_t pos) {
    return pos < L->len ? (unsigned char)L->src[pos] : -1;
}

/* Length of the line break at pos (1 for \n or \r, 2 for \r\n), else 0. */
static int newline_len(const lexer *L, size_t pos) {
    int c = byte_at(L, pos);
    if (c == '\n') return 1;
    if (c == '\r') return byte_at(L, pos + 1) == '\n' ? 2 : 1;
    return 0;
}

/* Steps over the line break at pos; the next line starts after it. */
static size_t skip_newline(lexer *L, size_t pos) {
    pos += (size_t)newline_len(L, pos);
    L->line++;
    L->line_start = pos;
    return pos;
}

static bool is_name_start(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_name_char(int c) { return is_name_start(c) || is_digit(c); }

/* What a byte starts, for the main loop's one switch (and the loops over
 * names and spaces): a test per byte instead of a chain of comparisons,
 * which the fuzz build's coverage tracing calls out on each (the lexer was
 * a sixth of fuzz_graph's time, docs/robustness.md). byte_class[c] for
 * c in 0..255; made once per process with the operator index (tables). */
enum {
    BC_OTHER,  /* an invalid character */
    BC_SPACE,  /* ' ', '\t', '\f' */
    BC_HASH,   /* '#' */
    BC_EOL,    /* '\n', '\r' */
    BC_BSLASH, /* '\\' */
    BC_NAME,   /* a letter or '_' */
    BC_DIGIT,  /* '0'..'9' */
    BC_DOT,    /* '.' */
    BC_QUOTE,  /* '\'', '"' */
    BC_OP,     /* any other printable ASCII: an operator or an invalid one */
};
static unsigned char byte_class[256];

/* Reports the byte at pos as an invalid character; a valid UTF-8 sequence is
 * shown whole with its code point, as CPython does. */
static _Noreturn void invalid_char(lexer *L, size_t pos) {
    mt_loc loc = loc_at(L, pos);
    int c = byte_at(L, pos);
    if (c > 0x20 && c < 0x7f) mt_fail(MT_ERR_SYNTAX, loc, "invalid character '%c'", c);
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n && pos + (size_t)n <= L->len) {
        unsigned cp = (unsigned)c & (0x7fu >> n);
        bool ok = true;
        for (int i = 1; i < n; i++) {
            int d = byte_at(L, pos + (size_t)i);
            if ((d & 0xc0) != 0x80) ok = false;
            cp = (cp << 6) | ((unsigned)d & 0x3f);
        }
        if (ok && cp >= 0x80 && cp <= 0x10ffff && !(cp >= 0xd800 && cp < 0xe000) &&
            !(n == 3 && cp < 0x800) && !(n == 4 && cp < 0x10000))
            mt_fail(MT_ERR_SYNTAX, loc, "invalid character '%.*s' (U+%04X)", n, L->src + pos, cp);
    }
    mt_fail(MT_ERR_SYNTAX, loc, "invalid character '\\x%02x'", (unsigned)c);
}

static mt_token *push(lexer *L, mt_tok_kind kind, size_t start, size_t end, mt_loc loc) {
    if (L->toks.len >= L->max_tokens)
        mt_fail(MT_ERR_LIMIT, loc, "too many tokens (more than %d)", L->max_tokens);
    mt_token t = {0};
    t.kind = kind;
    t.loc = loc;
    t.text = L->src + start;
    t.len = (int)(end - start);
    MT_VEC_PUSH(L->arena, &L->toks, t);
    if (kind != TK_NEWLINE && kind != TK_INDENT && kind != TK_DEDENT && kind != TK_EOF)
        L->line_has_tokens = true;
    return &L->toks.data[L->toks.len - 1];
}

/* ---- indentation ---------------------------------------------------------- */

/* At the start of a physical line outside brackets: skips the indentation and
 * emits INDENT/DEDENT as needed. Blank and comment-only lines emit nothing
 * (the main loop then skips their comment and line break). */
static void indentation(lexer *L) {
    size_t p = L->pos;
    size_t tab = SIZE_MAX, from = p; /* a form feed restarts the count, as in Python */
    while (p < L->len && (L->src[p] == ' ' || L->src[p] == '\t' || L->src[p] == '\f')) {
        if (L->src[p] == '\t' && tab == SIZE_MAX) tab = p;
        if (L->src[p] == '\f') from = p + 1;
        p++;
    }
    L->pos = p;
    if (p >= L->len || newline_len(L, p) || L->src[p] == '#') return;
    if (tab != SIZE_MAX)
        mt_fail(MT_ERR_SYNTAX, loc_at(L, tab), "tabs are not allowed in indentation; use spaces");
    int col = (int)(p - from);
    mt_loc loc = loc_at(L, p);
    int top = L->indents.data[L->indents.len - 1];
    if (col > top) {
        if (L->indents.len > L->max_indent)
            mt_fail(MT_ERR_LIMIT, loc, "too many indentation levels (more than %d)", L->max_indent);
        MT_VEC_PUSH(L->arena, &L->indents, col);
        push(L, TK_INDENT, p, p, loc);
        return;
    }
    while (col < L->indents.data[L->indents.len - 1]) {
        L->indents.len--;
        push(L, TK_DEDENT, p, p, loc);
    }
    if (col != L->indents.data[L->indents.len - 1])
        mt_fail(MT_ERR_SYNTAX, loc, "unindent does not match any outer indentation level");
}

/* ---- numbers ---------------------------------------------------------------- */

static int digit_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Skips digits of `base` with single underscores between them, starting at
 * p; `lead` allows one underscore before the first digit (0x_ff), `need`
 * requires a digit. Returns the end. An underscore not followed by a digit is
 * an error at that underscore. */
static size_t digit_run(lexer *L, size_t p, int base, bool lead, bool need, const char *what) {
    size_t start = p;
    while (p < L->len) {
        int c = byte_at(L, p);
        if (c == '_') {
            if (digit_value(byte_at(L, p + 1)) >= base || (p == start && !lead))
                mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid %s literal", what);
            p++;
            continue;
        }
        if (digit_value(c) >= base || !is_name_char(c)) break;
        p++;
    }
    if (need && p == start) mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid %s literal", what);
    return p;
}

/* Value of the digits in [s, e) (underscores skipped); false on overflow. */
static bool int_value(const char *s, const char *e, int base, int64_t *out) {
    int64_t v = 0;
    for (; s < e; s++) {
        if (*s == '_') continue;
        if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, digit_value(*s), &v))
            return false;
    }
    *out = v;
    return true;
}

/* After a number: a name character glued to it is an error ("1abc", "0b12"). */
static void check_number_end(lexer *L, size_t p, int base, const char *what) {
    int c = byte_at(L, p);
    if ((c == 'j' || c == 'J') && base == 10)
        mt_fail(MT_ERR_UNSUPPORTED, loc_at(L, p),
                "complex literals are not supported in minitriton kernels");
    if (is_digit(c) && base < 10)
        mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid digit '%c' in %s literal", c, what);
    if (is_name_char(c)) mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid %s literal", what);
}

static void lex_number(lexer *L) {
    size_t start = L->pos, p = start;
    mt_loc loc = loc_at(L, start);
    int c1 = byte_at(L, p + 1) | 0x20;
    if (byte_at(L, p) == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
        int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
        const char *what = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
        p += 2;
        size_t digits = p;
        p = digit_run(L, p, base, true, false, what);
        check_number_end(L, p, base, what);
        if (p == digits) mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid %s literal", what);
        mt_token *t = push(L, TK_INT, start, p, loc);
        if (!int_value(L->src + digits, L->src + p, base, &t->ival))
            mt_fail(MT_ERR_SYNTAX, loc, "integer literal is too large (does not fit in int64)");
        L->pos = p;
        return;
    }
    bool is_float = false;
    p = digit_run(L, p, 10, false, false, "decimal");
    size_t int_end = p;
    if (byte_at(L, p) == '.') {
        is_float = true;
        p++;
        if (is_digit(byte_at(L, p))) p = digit_run(L, p, 10, false, false, "decimal");
    }
    int e = byte_at(L, p);
    if (e == 'e' || e == 'E') {
        size_t q = p + 1;
        if (byte_at(L, q) == '+' || byte_at(L, q) == '-') q++;
        if (!is_digit(byte_at(L, q))) mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "invalid decimal literal");
        p = digit_run(L, q, 10, false, true, "decimal");
        is_float = true;
    }
    check_number_end(L, p, 10, "decimal");
    mt_token *t = push(L, is_float ? TK_FLOAT : TK_INT, start, p, loc);
    L->pos = p;
    if (!is_float) {
        const char *s = L->src + start, *end = L->src + int_end;
        if (*s == '0') {
            for (const char *q = s; q < end; q++)
                if (*q != '0' && *q != '_')
                    mt_fail(MT_ERR_SYNTAX, loc,
                            "leading zeros in decimal integer literals are not permitted; "
                            "use an 0o prefix for octal integers");
        }
        if (!int_value(s, end, 10, &t->ival))
            mt_fail(MT_ERR_SYNTAX, loc, "integer literal is too large (does not fit in int64)");
        return;
    }
    char *buf = mt_arena_alloc(L->arena, p - start + 1), *w = buf;
    for (size_t i = start; i < p; i++)
        if (L->src[i] != '_') *w++ = L->src[i];
    *w = 0;
    t->fval = mt_c_strtod(buf, NULL);
}

/* ---- strings ------------------------------------------------------------------ */

static void lex_string(lexer *L) {
    size_t start = L->pos;
    mt_loc loc = loc_at(L, start);
    char q = L->src[start];
    bool triple = byte_at(L, start + 1) == q && byte_at(L, start + 2) == q;
    size_t p = start + (triple ? 3 : 1);
    mt_sb sb;
    mt_sb_init(&sb, L->arena);
    for (;;) {
        if (p >= L->len)
            mt_fail(MT_ERR_SYNTAX, loc, triple ? "unterminated triple-quoted string literal"
                                               : "unterminated string literal");
        int c = byte_at(L, p);
        if (c == 0) invalid_char(L, p);
        if (c == q) {
            if (!triple) {
                p++;
                break;
            }
            if (byte_at(L, p + 1) == q && byte_at(L, p + 2) == q) {
                p += 3;
                break;
            }
        }
        if (newline_len(L, p)) {
            if (!triple) mt_fail(MT_ERR_SYNTAX, loc, "unterminated string literal");
            p = skip_newline(L, p);
            mt_sb_putc(&sb, '\n');
            continue;
        }
        if (c != '\\') {
            mt_sb_putc(&sb, (char)c);
            p++;
            continue;
        }
        int e = byte_at(L, p + 1);
        const char *out = NULL;
        switch (e) {
        case 'n': out = "\n"; break;
        case 't': out = "\t"; break;
        case 'r': out = "\r"; break;
        case '\\': out = "\\"; break;
        case '\'': out = "'"; break;
        case '"': out = "\""; break;
        case -1:
            mt_fail(MT_ERR_SYNTAX, loc, triple ? "unterminated triple-quoted string literal"
                                               : "unterminated string literal");
        default:
            break;
        }
        if (out) {
            mt_sb_puts(&sb, out);
            p += 2;
        } else if (newline_len(L, p + 1)) {
            p = skip_newline(L, p + 1); /* backslash-newline: nothing */
        } else if (e == 0) {
            invalid_char(L, p + 1);
        } else if (e > 0x20 && e < 0x7f) {
            mt_fail(MT_ERR_SYNTAX, loc_at(L, p), "unsupported escape sequence '\\%c'", e);
        } else {
            mt_fail(MT_ERR_SYNTAX, loc_at(L, p),
                    "unsupported escape sequence ('\\' followed by byte 0x%02x)", (unsigned)e);
        }
    }
    /* loc was taken before any line break: a token's place is its start. */
    mt_token *t = push(L, TK_STRING, start, p, loc);
    t->str = mt_arena_strndup(L->arena, mt_sb_str(&sb), sb.len);
    L->pos = p;
}

/* ---- names and keywords ---------------------------------------------------- */

static const struct {
    const char *word;
    mt_tok_kind kind;
} keywords[] = {
    {"def", TK_DEF},       {"return", TK_RETURN},     {"if", TK_IF},
    {"elif", TK_ELIF},     {"else", TK_ELSE},         {"for", TK_FOR},
    {"in", TK_IN},         {"while", TK_WHILE},       {"with", TK_WITH},
    {"as", TK_AS},         {"pass", TK_PASS},         {"and", TK_AND},
    {"or", TK_OR},         {"not", TK_NOT},           {"is", TK_IS},
    {"None", TK_NONE},     {"True", TK_TRUE},         {"False", TK_FALSE},
    {"assert", TK_ASSERT}, {"break", TK_BREAK},       {"continue", TK_CONTINUE},
    {"lambda", TK_LAMBDA}, {"import", TK_IMPORT},     {"from", TK_FROM},
    {"class", TK_CLASS},   {"global", TK_GLOBAL},     {"nonlocal", TK_NONLOCAL},
    {"yield", TK_YIELD},   {"del", TK_DEL},           {"try", TK_TRY},
    {"except", TK_EXCEPT}, {"finally", TK_FINALLY},   {"raise", TK_RAISE},
    {"async", TK_ASYNC},   {"await", TK_AWAIT},
};

enum { NKW = sizeof keywords / sizeof keywords[0] };

/* The keywords grouped by first character (kw_by_first[kw_first[c] ..
 * kw_first[c + 1])) with their lengths: a name is compared with the 0 to 5
 * keywords of its first letter, not all 35. Made once (tables). */
static unsigned char kw_first[129], kw_by_first[NKW];
static size_t kw_len[NKW];

static bool is_string_prefix(const char *s, size_t n) {
    if (n < 1 || n > 2) return false;
    char a = (char)(s[0] | 0x20), b = n == 2 ? (char)(s[1] | 0x20) : 0;
    if (n == 1) return a == 'r' || a == 'u' || a == 'b' || a == 'f';
    return (a == 'r' && (b == 'b' || b == 'f')) || ((a == 'b' || a == 'f') && b == 'r');
}

static void lex_name(lexer *L) {
    size_t start = L->pos, p = start;
    while (p < L->len && (byte_class[(unsigned char)L->src[p]] == BC_NAME ||
                          byte_class[(unsigned char)L->src[p]] == BC_DIGIT))
        p++;
    mt_loc loc = loc_at(L, start);
    size_t n = p - start;
    int next = byte_at(L, p);
    if ((next == '\'' || next == '"') && is_string_prefix(L->src + start, n))
        mt_fail(MT_ERR_SYNTAX, loc, "string prefixes are not supported");
    mt_tok_kind kind = TK_NAME;
    unsigned char c0 = (unsigned char)L->src[start]; /* a letter or '_': see mt_lex */
    for (int k = kw_first[c0]; k < kw_first[c0 + 1]; k++) {
        int i = kw_by_first[k];
        if (kw_len[i] == n && memcmp(keywords[i].word, L->src + start, n) == 0) {
            kind = keywords[i].kind;
            break;
        }
    }
    mt_token *t = push(L, kind, start, p, loc);
    if (kind == TK_NAME) t->str = mt_arena_strndup(L->arena, L->src + start, n);
    L->pos = p;
}

/* ---- operators and brackets --------------------------------------------------- */

/* Longest first, so that the first match is the longest. */
static const struct {
    const char *text;
    mt_tok_kind kind;
} operators[] = {
    {"**=", TK_DSTAREQ}, {"//=", TK_DSLASHEQ}, {"<<=", TK_LSHIFTEQ}, {">>=", TK_RSHIFTEQ},
    {"...", TK_ELLIPSIS}, {"**", TK_DSTAR},    {"//", TK_DSLASH},    {"<<", TK_LSHIFT},
    {">>", TK_RSHIFT},   {"<=", TK_LE},        {">=", TK_GE},        {"==", TK_EQ},
    {"!=", TK_NE},       {"+=", TK_PLUSEQ},    {"-=", TK_MINUSEQ},   {"*=", TK_STAREQ},
    {"/=", TK_SLASHEQ},  {"%=", TK_PERCENTEQ}, {"@=", TK_ATEQ},      {"&=", TK_AMPEQ},
    {"|=", TK_PIPEEQ},   {"^=", TK_CARETEQ},   {":=", TK_WALRUS},    {"->", TK_ARROW},
    {"+", TK_PLUS},      {"-", TK_MINUS},      {"*", TK_STAR},       {"/", TK_SLASH},
    {"%", TK_PERCENT},   {"@", TK_AT},         {"&", TK_AMP},        {"|", TK_PIPE},
    {"^", TK_CARET},     {"~", TK_TILDE},      {"<", TK_LT},         {">", TK_GT},
    {"=", TK_ASSIGN},    {"(", TK_LPAREN},     {")", TK_RPAREN},     {"[", TK_LBRACKET},
    {"]", TK_RBRACKET},  {"{", TK_LBRACE},     {"}", TK_RBRACE},     {",", TK_COMMA},
    {":", TK_COLON},     {".", TK_DOT},        {";", TK_SEMI},
};

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

static void bracket(lexer *L, char c, mt_loc loc) {
    if (c == '(' || c == '[' || c == '{') {
        open_bracket b = {c, loc};
        MT_VEC_PUSH(L->arena, &L->brackets, b);
        return;
    }
    if (L->brackets.len == 0) mt_fail(MT_ERR_SYNTAX, loc, "unmatched '%c'", c);
    open_bracket b = L->brackets.data[--L->brackets.len];
    if (closer_of(b.ch) != c)
        mt_fail(MT_ERR_SYNTAX, loc, "closing '%c' does not match '%c' at %d:%d", c, b.ch,
                b.loc.line, b.loc.col);
}

enum { NOPS = sizeof operators / sizeof operators[0] };

/* The operators grouped by first character, longest first within a group:
 * those starting with c are by_first[first[c] .. first[c + 1]). Built once
 * per process (pthread_once: compiles may run on several threads), so that
 * an operator token tries its 1 to 4 candidates, not all 47. */
static unsigned char first[129], by_first[NOPS];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

/* Groups words[i] (at stride bytes, the first member a string) by first
 * character: by[start[c] .. start[c + 1]) in their order. */
static void index_by_first(const void *words, size_t stride, int n, unsigned char *start,
                           unsigned char *by) {
    int count[128] = {0};
    for (int i = 0; i < n; i++) count[(unsigned char)**(const char *const *)((const char *)words + stride * i)]++;
    for (int c = 0; c < 128; c++) start[c + 1] = (unsigned char)(start[c] + count[c]);
    unsigned char fill[128];
    memcpy(fill, start, sizeof fill);
    for (int i = 0; i < n; i++)
        by[fill[(unsigned char)**(const char *const *)((const char *)words + stride * i)]++] = (unsigned char)i;
}

/* The lexer's tables: operators and keywords by first character, byte classes. */
static void tables(void) {
    index_by_first(operators, sizeof operators[0], NOPS, first, by_first);
    index_by_first(keywords, sizeof keywords[0], NKW, kw_first, kw_by_first);
    for (int i = 0; i < NKW; i++) kw_len[i] = strlen(keywords[i].word);
    for (int c = 0x21; c < 0x7f; c++) byte_class[c] = BC_OP;
    for (int c = 0; c < 256; c++) {
        if (is_name_start(c)) byte_class[c] = BC_NAME;
        if (is_digit(c)) byte_class[c] = BC_DIGIT;
    }
    byte_class[' '] = byte_class['\t'] = byte_class['\f'] = BC_SPACE;
    byte_class['#'] = BC_HASH;
    byte_class['\n'] = byte_class['\r'] = BC_EOL;
    byte_class['\\'] = BC_BSLASH;
    byte_class['.'] = BC_DOT;
    byte_class['\''] = byte_class['"'] = BC_QUOTE;
}

static void lex_operator(lexer *L) {
    size_t start = L->pos;
    unsigned char c = (unsigned char)L->src[start]; /* 0x21 .. 0x7e: see mt_lex */
    for (int k = first[c]; k < first[c + 1]; k++) {
        int i = by_first[k];
        size_t n = strlen(operators[i].text);
        if (start + n <= L->len && memcmp(L->src + start, operators[i].text, n) == 0) {
            mt_loc loc = loc_at(L, start);
            if (n == 1 && strchr("()[]{}", L->src[start])) bracket(L, L->src[start], loc);
            push(L, operators[i].kind, start, start + n, loc);
            L->pos = start + n;
            return;
        }
    }
    invalid_char(L, start);
}

/* ---- the main loop ------------------------------------------------------------ */

mt_token *mt_lex(mt_arena *a, const char *src, size_t len, const mt_lex_limits *lim, int *ntok) {
    size_t max_src = lim && lim->max_source_bytes ? lim->max_source_bytes : DEFAULT_MAX_SOURCE;
    if (max_src > INT_MAX) max_src = INT_MAX; /* keeps every line and column in an int */
    if (len > max_src)
        mt_fail(MT_ERR_LIMIT, MT_NOLOC, "source is too large (%zu bytes; the limit is %zu)", len,
                max_src);
    lexer L = {0};
    L.arena = a;
    L.src = src ? src : "";
    L.len = src ? len : 0;
    L.line = 1;
    L.max_tokens = lim && lim->max_tokens > 0 ? lim->max_tokens : DEFAULT_MAX_TOKENS;
    L.max_indent = lim && lim->max_indent_depth > 0 ? lim->max_indent_depth : DEFAULT_MAX_INDENT;
    MT_VEC_PUSH(a, &L.indents, 0);
    if (L.len >= 3 && memcmp(L.src, "\xef\xbb\xbf", 3) == 0) L.pos = L.line_start = 3; /* BOM */

    pthread_once(&index_once, tables);
    bool at_line_start = true;
    while (L.pos < L.len || at_line_start) {
        if (at_line_start) {
            at_line_start = false;
            indentation(&L);
            continue;
        }
        size_t p = L.pos; /* < L.len */
        switch (byte_class[(unsigned char)L.src[p]]) {
        case BC_SPACE:
            do p++;
            while (p < L.len && byte_class[(unsigned char)L.src[p]] == BC_SPACE);
            L.pos = p;
            break;
        case BC_HASH: /* to the line break (a NUL on the way is an invalid character) */
            while (p < L.len && L.src[p] != '\n' && L.src[p] != '\r') {
                if (L.src[p] == 0) invalid_char(&L, p);
                p++;
            }
            L.pos = p;
            break;
        case BC_EOL: {
            mt_loc loc = loc_at(&L, p);
            L.pos = skip_newline(&L, p);
            if (L.brackets.len == 0) {
                if (L.line_has_tokens) push(&L, TK_NEWLINE, p, p + 1, loc);
                L.line_has_tokens = false;
                at_line_start = true;
            }
            break;
        }
        case BC_BSLASH:
            if (p + 1 >= L.len)
                mt_fail(MT_ERR_SYNTAX, loc_at(&L, p),
                        "unexpected end of file after line continuation character");
            if (!newline_len(&L, p + 1))
                mt_fail(MT_ERR_SYNTAX, loc_at(&L, p),
                        "unexpected character after line continuation character");
            L.pos = skip_newline(&L, p + 1);
            break;
        case BC_NAME: lex_name(&L); break;
        case BC_DIGIT: lex_number(&L); break;
        case BC_DOT:
            if (is_digit(byte_at(&L, p + 1))) lex_number(&L);
            else lex_operator(&L);
            break;
        case BC_QUOTE: lex_string(&L); break;
        case BC_OP: lex_operator(&L); break;
        default: invalid_char(&L, p);
        }
    }

    mt_loc eof = loc_at(&L, L.len);
    if (L.brackets.len) {
        open_bracket b = L.brackets.data[L.brackets.len - 1];
        mt_fail(MT_ERR_SYNTAX, eof, "unexpected end of file: '%c' expected (to close '%c' at %d:%d)",
                closer_of(b.ch), b.ch, b.loc.line, b.loc.col);
    }
    if (L.line_has_tokens) push(&L, TK_NEWLINE, L.len, L.len, eof);
    while (L.indents.len > 1) {
        L.indents.len--;
        push(&L, TK_DEDENT, L.len, L.len, eof);
    }
    /* The limit may not cut off the EOF token: it has its own slot. */
    L.max_tokens = INT_MAX;
    push(&L, TK_EOF, L.len, L.len, eof);
    if (ntok) *ntok = L.toks.len;
    return L.toks.data;
}
