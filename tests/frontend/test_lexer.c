/*
 * test_lexer.c -- unit tests of the lexer (src/frontend/lexer.c): token kinds,
 * values and places for every token class, indentation and line joining,
 * every error with its exact status, place and message, the limits, and a
 * robustness run over truncated and random inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/lexer.h"

#define END (-1)

static mt_arena *arena;

static int setup(void **state) {
    arena = mt_arena_create();
    return arena ? 0 : -1;
}

static int teardown(void **state) {
    mt_arena_destroy(arena);
    arena = NULL;
    return 0;
}

/* Lexes src (copied into a buffer of exactly its length, so ASan sees any
 * read past the end) and fails the test on an error. */
static mt_token *lex_n(const char *src, size_t len, int *ntok, const mt_lex_limits *lim) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, src, len);
    mt_errframe f;
    mt_token *volatile t = NULL; /* set inside MT_TRY */
    if (MT_TRY(&f)) {
        t = mt_lex(arena, copy, len, lim, ntok);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        print_error("unexpected error %d at %d:%d: %s\n", f.status, f.loc.line, f.loc.col, f.msg);
        free(copy);
        fail();
    }
    /* Token text points into the source: keep the copy alive in the arena. */
    char *keep = mt_arena_alloc(arena, len + 1);
    memcpy(keep, copy, len);
    for (int i = 0; i < *ntok; i++) t[i].text = keep + (t[i].text - copy);
    free(copy);
    return t;
}

static mt_token *lex(const char *src, int *ntok) { return lex_n(src, strlen(src), ntok, NULL); }

/* Asserts the kinds of src's tokens, a list ending in END. */
static void check_kinds(const char *src, ...) {
    int n;
    mt_token *t = lex(src, &n);
    va_list ap;
    va_start(ap, src);
    for (int i = 0;; i++) {
        int k = va_arg(ap, int);
        if (k == END) {
            assert_int_equal(i, n);
            break;
        }
        if (i >= n) fail_msg("%s: fewer tokens than expected", src);
        if ((int)t[i].kind != k)
            fail_msg("%s: token %d is %s, expected %s", src, i, mt_tok_kind_str(t[i].kind),
                     mt_tok_kind_str((mt_tok_kind)k));
    }
    va_end(ap);
}

static void check_loc(const mt_token *t, int line, int col) {
    assert_int_equal(t->loc.line, line);
    assert_int_equal(t->loc.col, col);
}

/* Asserts that lexing src[0..len) fails with exactly this status, place and
 * message. */
static void check_error_n(const char *src, size_t len, const mt_lex_limits *lim, mt_status st,
                          int line, int col, const char *msg) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, src, len);
    mt_errframe f;
    int n;
    if (MT_TRY(&f)) {
        mt_lex(arena, copy, len, lim, &n);
        mt_err_pop(&f);
        free(copy);
        fail_msg("no error for \"%s\"", src);
    } else {
        mt_err_pop(&f);
        free(copy);
        if (f.status != st || f.loc.line != line || f.loc.col != col || strcmp(f.msg, msg) != 0)
            fail_msg("for \"%s\"\n  got      %d @%d:%d %s\n  expected %d @%d:%d %s", src, f.status,
                     f.loc.line, f.loc.col, f.msg, st, line, col, msg);
    }
}

static void check_error(const char *src, int line, int col, const char *msg) {
    check_error_n(src, strlen(src), NULL, MT_ERR_SYNTAX, line, col, msg);
}

/* ---- tokens -------------------------------------------------------------------- */

static void test_simple_line(void **state) {
    int n;
    mt_token *t = lex("out = a + 12\n", &n);
    assert_int_equal(n, 7);
    assert_int_equal(t[0].kind, TK_NAME);
    assert_string_equal(t[0].str, "out");
    assert_int_equal(t[0].len, 3);
    assert_memory_equal(t[0].text, "out", 3);
    check_loc(&t[0], 1, 1);
    assert_int_equal(t[1].kind, TK_ASSIGN);
    check_loc(&t[1], 1, 5);
    assert_int_equal(t[2].kind, TK_NAME);
    check_loc(&t[2], 1, 7);
    assert_int_equal(t[3].kind, TK_PLUS);
    check_loc(&t[3], 1, 9);
    assert_int_equal(t[4].kind, TK_INT);
    assert_int_equal(t[4].ival, 12);
    assert_int_equal(t[4].len, 2);
    check_loc(&t[4], 1, 11);
    assert_int_equal(t[5].kind, TK_NEWLINE);
    check_loc(&t[5], 1, 13);
    assert_int_equal(t[6].kind, TK_EOF);
    check_loc(&t[6], 2, 1);
}

static void test_empty_sources(void **state) {
    check_kinds("", TK_EOF, END);
    check_kinds("\n\n   \n", TK_EOF, END);
    check_kinds("# only a comment", TK_EOF, END);
    check_kinds("   # indented comment\n\t\n", TK_EOF, END);
    int n;
    mt_errframe f;
    mt_token *t = NULL;
    if (MT_TRY(&f)) {
        t = mt_lex(arena, NULL, 0, NULL, &n);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        fail();
    }
    assert_int_equal(n, 1);
    assert_int_equal(t[0].kind, TK_EOF);
    check_loc(&t[0], 1, 1);
}

static void test_no_trailing_newline(void **state) {
    int n;
    mt_token *t = lex("x", &n);
    assert_int_equal(n, 3);
    assert_int_equal(t[1].kind, TK_NEWLINE);
    check_loc(&t[1], 1, 2);
    assert_int_equal(t[2].kind, TK_EOF);
    check_loc(&t[2], 1, 2);
}

static void test_operators(void **state) {
    check_kinds("+ - * / // % ** @ << >> & | ^ ~ < > <= >= == != = += -= *= /= //= %= **= "
                "@= &= |= ^= <<= >>= := ( ) [ ] { } , : . ; -> ...",
                TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_DSLASH, TK_PERCENT, TK_DSTAR, TK_AT,
                TK_LSHIFT, TK_RSHIFT, TK_AMP, TK_PIPE, TK_CARET, TK_TILDE, TK_LT, TK_GT, TK_LE,
                TK_GE, TK_EQ, TK_NE, TK_ASSIGN, TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ, TK_SLASHEQ,
                TK_DSLASHEQ, TK_PERCENTEQ, TK_DSTAREQ, TK_ATEQ, TK_AMPEQ, TK_PIPEEQ, TK_CARETEQ,
                TK_LSHIFTEQ, TK_RSHIFTEQ, TK_WALRUS, TK_LPAREN, TK_RPAREN, TK_LBRACKET,
                TK_RBRACKET, TK_LBRACE, TK_RBRACE, TK_COMMA, TK_COLON, TK_DOT, TK_SEMI, TK_ARROW,
                TK_ELLIPSIS, TK_NEWLINE, TK_EOF, END);
    /* longest match, without spaces */
    check_kinds("a**=b//c<<=d->e...f", TK_NAME, TK_DSTAREQ, TK_NAME, TK_DSLASH, TK_NAME,
                TK_LSHIFTEQ, TK_NAME, TK_ARROW, TK_NAME, TK_ELLIPSIS, TK_NAME, TK_NEWLINE, TK_EOF,
                END);
    check_kinds("x[..,.]", TK_NAME, TK_LBRACKET, TK_DOT, TK_DOT, TK_COMMA, TK_DOT, TK_RBRACKET,
                TK_NEWLINE, TK_EOF, END);
    check_kinds("a.b.c", TK_NAME, TK_DOT, TK_NAME, TK_DOT, TK_NAME, TK_NEWLINE, TK_EOF, END);
}

static void test_keywords(void **state) {
    check_kinds("def return if elif else for in while with as pass and or not is None True "
                "False assert break continue lambda import from class global nonlocal yield del "
                "try except finally raise async await",
                TK_DEF, TK_RETURN, TK_IF, TK_ELIF, TK_ELSE, TK_FOR, TK_IN, TK_WHILE, TK_WITH,
                TK_AS, TK_PASS, TK_AND, TK_OR, TK_NOT, TK_IS, TK_NONE, TK_TRUE, TK_FALSE,
                TK_ASSERT, TK_BREAK, TK_CONTINUE, TK_LAMBDA, TK_IMPORT, TK_FROM, TK_CLASS,
                TK_GLOBAL, TK_NONLOCAL, TK_YIELD, TK_DEL, TK_TRY, TK_EXCEPT, TK_FINALLY, TK_RAISE,
                TK_ASYNC, TK_AWAIT, TK_NEWLINE, TK_EOF, END);
    /* near misses are names */
    int n;
    mt_token *t = lex("define none iff _if If r b2 __x", &n);
    assert_int_equal(n, 10);
    for (int i = 0; i < 8; i++) assert_int_equal(t[i].kind, TK_NAME);
    assert_string_equal(t[1].str, "none");
    assert_string_equal(t[7].str, "__x");
}

static void test_kind_str(void **state) {
    assert_string_equal(mt_tok_kind_str(TK_EOF), "end of file");
    assert_string_equal(mt_tok_kind_str(TK_NAME), "name");
    assert_string_equal(mt_tok_kind_str(TK_DEF), "def");
    assert_string_equal(mt_tok_kind_str(TK_DSLASHEQ), "//=");
    assert_string_equal(mt_tok_kind_str(TK_ELLIPSIS), "...");
    assert_string_equal(mt_tok_kind_str(TK_COUNT_), "?");
}

/* ---- lines and indentation -------------------------------------------------------- */

static void test_indentation(void **state) {
    const char *src = "def f(x):\n"
                      "    if x:\n"
                      "        y = 1\n"
                      "\n"
                      "      # a comment at an odd column\n"
                      "    return y\n"
                      "z = 2\n";
    check_kinds(src, TK_DEF, TK_NAME, TK_LPAREN, TK_NAME, TK_RPAREN, TK_COLON, TK_NEWLINE,
                TK_INDENT, TK_IF, TK_NAME, TK_COLON, TK_NEWLINE, TK_INDENT, TK_NAME, TK_ASSIGN,
                TK_INT, TK_NEWLINE, TK_DEDENT, TK_RETURN, TK_NAME, TK_NEWLINE, TK_DEDENT, TK_NAME,
                TK_ASSIGN, TK_INT, TK_NEWLINE, TK_EOF, END);
    int n;
    mt_token *t = lex(src, &n);
    check_loc(&t[7], 2, 5);   /* INDENT at the first token of its line */
    check_loc(&t[12], 3, 9);
    check_loc(&t[17], 6, 5);  /* DEDENT too */
    check_loc(&t[21], 7, 1);
}

static void test_dedent_several_and_eof(void **state) {
    check_kinds("a:\n b:\n  c\nd\n", TK_NAME, TK_COLON, TK_NEWLINE, TK_INDENT, TK_NAME, TK_COLON,
                TK_NEWLINE, TK_INDENT, TK_NAME, TK_NEWLINE, TK_DEDENT, TK_DEDENT, TK_NAME,
                TK_NEWLINE, TK_EOF, END);
    /* open blocks close at the end, after the last line's NEWLINE */
    int n;
    mt_token *t = lex("a:\n  b:\n    c", &n);
    assert_int_equal(n, 13);
    assert_int_equal(t[9].kind, TK_NEWLINE);
    assert_int_equal(t[10].kind, TK_DEDENT);
    assert_int_equal(t[11].kind, TK_DEDENT);
    check_loc(&t[11], 3, 6);
    assert_int_equal(t[12].kind, TK_EOF);
}

static void test_crlf_and_cr(void **state) {
    int n;
    mt_token *t = lex("a = 1\r\nif a:\r\n    b\r\n", &n);
    check_kinds("a = 1\r\nif a:\r\n    b\r\n", TK_NAME, TK_ASSIGN, TK_INT, TK_NEWLINE, TK_IF,
                TK_NAME, TK_COLON, TK_NEWLINE, TK_INDENT, TK_NAME, TK_NEWLINE, TK_DEDENT, TK_EOF,
                END);
    check_loc(&t[4], 2, 1);
    check_loc(&t[9], 3, 5);
    t = lex("a\rb\r", &n);
    assert_int_equal(n, 5);
    check_loc(&t[2], 2, 1);
}

static void test_implicit_joining(void **state) {
    const char *src = "x = f(a,\n"
                      "      b,  # comment inside\n"
                      "\n"
                      "  c)[\n"
                      "1]\n"
                      "y = {\n"
                      "}\n";
    check_kinds(src, TK_NAME, TK_ASSIGN, TK_NAME, TK_LPAREN, TK_NAME, TK_COMMA, TK_NAME, TK_COMMA,
                TK_NAME, TK_RPAREN, TK_LBRACKET, TK_INT, TK_RBRACKET, TK_NEWLINE, TK_NAME,
                TK_ASSIGN, TK_LBRACE, TK_RBRACE, TK_NEWLINE, TK_EOF, END);
    int n;
    mt_token *t = lex(src, &n);
    check_loc(&t[8], 4, 3);
    check_loc(&t[11], 5, 1);
    check_loc(&t[13], 5, 3);
}

static void test_explicit_joining(void **state) {
    int n;
    mt_token *t = lex("x = 1 + \\\n        2\nif a and \\\r\n b:\n    pass\n", &n);
    check_kinds("x = 1 + \\\n        2\n", TK_NAME, TK_ASSIGN, TK_INT, TK_PLUS, TK_INT, TK_NEWLINE,
                TK_EOF, END);
    assert_int_equal(t[4].kind, TK_INT);
    check_loc(&t[4], 2, 9);
    assert_int_equal(t[9].kind, TK_NAME);
    check_loc(&t[9], 4, 2);
    assert_int_equal(t[11].kind, TK_NEWLINE);
    assert_int_equal(t[12].kind, TK_INDENT);
}

static void test_semicolons_and_same_line(void **state) {
    check_kinds("if x: a = 1; b = 2\n", TK_IF, TK_NAME, TK_COLON, TK_NAME, TK_ASSIGN, TK_INT,
                TK_SEMI, TK_NAME, TK_ASSIGN, TK_INT, TK_NEWLINE, TK_EOF, END);
}

static void test_form_feed(void **state) {
    /* a form feed in the indentation restarts the count, as in Python */
    check_kinds("a:\n  b\n\f  c\n", TK_NAME, TK_COLON, TK_NEWLINE, TK_INDENT, TK_NAME, TK_NEWLINE,
                TK_NAME, TK_NEWLINE, TK_DEDENT, TK_EOF, END);
}

static void test_bom(void **state) {
    int n;
    mt_token *t = lex("\xef\xbb\xbfx = 1\n", &n);
    assert_int_equal(t[0].kind, TK_NAME);
    check_loc(&t[0], 1, 1);
}

/* ---- numbers ------------------------------------------------------------------------ */

static int64_t int_of(const char *src) {
    int n;
    mt_token *t = lex(src, &n);
    assert_int_equal(n, 3);
    assert_int_equal(t[0].kind, TK_INT);
    return t[0].ival;
}

static double float_of(const char *src) {
    int n;
    mt_token *t = lex(src, &n);
    assert_int_equal(n, 3);
    assert_int_equal(t[0].kind, TK_FLOAT);
    assert_int_equal(t[0].len, (int)strlen(src));
    return t[0].fval;
}

static void test_integers(void **state) {
    assert_int_equal(int_of("0"), 0);
    assert_int_equal(int_of("00"), 0);
    assert_int_equal(int_of("0_0"), 0);
    assert_int_equal(int_of("7"), 7);
    assert_int_equal(int_of("1_000_000"), 1000000);
    assert_int_equal(int_of("0x1F"), 31);
    assert_int_equal(int_of("0XfF"), 255);
    assert_int_equal(int_of("0x_ff"), 255);
    assert_int_equal(int_of("0xdead_beef"), 0xdeadbeefLL);
    assert_int_equal(int_of("0o17"), 15);
    assert_int_equal(int_of("0O7_7"), 63);
    assert_int_equal(int_of("0b1011"), 11);
    assert_int_equal(int_of("0B_1_0"), 2);
    assert_true(int_of("9223372036854775807") == INT64_MAX);
    assert_true(int_of("0x7fffffffffffffff") == INT64_MAX);
    assert_true(int_of("0b" "111111111111111111111111111111111111111111111111111111111111111") ==
                INT64_MAX);
}

static void test_floats(void **state) {
    assert_true(float_of("1.5") == 1.5);
    assert_true(float_of(".5") == 0.5);
    assert_true(float_of("1.") == 1.0);
    assert_true(float_of("1e-5") == 1e-5);
    assert_true(float_of("1E+3") == 1000.0);
    assert_true(float_of("2.5e3") == 2500.0);
    assert_true(float_of("1_0.2_5") == 10.25);
    assert_true(float_of("1e1_0") == 1e10);
    assert_true(float_of("0.1") == 0.1);
    assert_true(float_of("00.5") == 0.5);
    assert_true(float_of("0123.5") == 123.5);
    assert_true(float_of("1.e2") == 100.0);
    assert_true(float_of("3e0") == 3.0);
    assert_true(isinf(float_of("1e999")));
    assert_true(float_of("1e-400") == 0.0);
    /* `1.` then `.5`; a name after a dot is an attribute */
    check_kinds("1..5", TK_FLOAT, TK_FLOAT, TK_NEWLINE, TK_EOF, END);
    check_kinds("x.real", TK_NAME, TK_DOT, TK_NAME, TK_NEWLINE, TK_EOF, END);
    check_kinds("1 .real", TK_INT, TK_DOT, TK_NAME, TK_NEWLINE, TK_EOF, END);
    check_kinds("-1", TK_MINUS, TK_INT, TK_NEWLINE, TK_EOF, END);
}

/* ---- strings ------------------------------------------------------------------------ */

static const char *str_of(const char *src) {
    int n;
    mt_token *t = lex(src, &n);
    assert_int_equal(t[0].kind, TK_STRING);
    assert_int_equal(t[0].len, (int)strlen(src));
    return t[0].str;
}

static void test_strings(void **state) {
    assert_string_equal(str_of("'abc'"), "abc");
    assert_string_equal(str_of("\"abc\""), "abc");
    assert_string_equal(str_of("''"), "");
    assert_string_equal(str_of("\"\""), "");
    assert_string_equal(str_of("'say \"hi\"'"), "say \"hi\"");
    assert_string_equal(str_of("\"it's\""), "it's");
    assert_string_equal(str_of("'a\\nb\\tc\\\\d\\'e\\\"f\\rg'"), "a\nb\tc\\d'e\"f\rg");
    assert_string_equal(str_of("'a\\\nb'"), "ab"); /* backslash-newline */
    assert_string_equal(str_of("'caf\xc3\xa9'"), "caf\xc3\xa9");
    assert_string_equal(str_of("'#not a comment'"), "#not a comment");
}

static void test_triple_strings(void **state) {
    assert_string_equal(str_of("\"\"\"doc\"\"\""), "doc");
    assert_string_equal(str_of("'''a\nb'''"), "a\nb");
    assert_string_equal(str_of("\"\"\"x \"quoted\" \"\" y\"\"\""), "x \"quoted\" \"\" y");
    assert_string_equal(str_of("'''a\r\nb'''"), "a\nb");
    assert_string_equal(str_of("\"\"\"\"\"\""), "");
    int n;
    mt_token *t = lex("def f():\n    \"\"\"Line one.\n\n    Line three.\n    \"\"\"\n    return x\n", &n);
    assert_int_equal(t[6].kind, TK_INDENT);
    assert_int_equal(t[7].kind, TK_STRING);
    check_loc(&t[7], 2, 5);
    assert_string_equal(t[7].str, "Line one.\n\n    Line three.\n    ");
    assert_int_equal(t[8].kind, TK_NEWLINE);
    check_loc(&t[8], 5, 8);
    assert_int_equal(t[9].kind, TK_RETURN);
    check_loc(&t[9], 6, 5);
}

static void test_columns_count_bytes(void **state) {
    int n;
    mt_token *t = lex("s = '\xc3\xa9\xc3\xa9' + x\n", &n);
    assert_int_equal(t[3].kind, TK_PLUS);
    check_loc(&t[3], 1, 12);
    check_loc(&t[4], 1, 14);
}

/* ---- errors ------------------------------------------------------------------------- */

static void test_error_indentation(void **state) {
    check_error("if x:\n\tpass\n", 2, 1, "tabs are not allowed in indentation; use spaces");
    check_error("if x:\n  \t  pass\n", 2, 3, "tabs are not allowed in indentation; use spaces");
    check_error("if x:\n    if y:\n        a\n  b\n", 4, 3,
                "unindent does not match any outer indentation level");
    /* tabs on blank lines and after the indentation are fine */
    check_kinds("if x:\n\t\n    a =\t1\n", TK_IF, TK_NAME, TK_COLON, TK_NEWLINE, TK_INDENT, TK_NAME,
                TK_ASSIGN, TK_INT, TK_NEWLINE, TK_DEDENT, TK_EOF, END);
}

static void test_error_strings(void **state) {
    check_error("x = 'abc\n", 1, 5, "unterminated string literal");
    check_error("x = \"abc", 1, 5, "unterminated string literal");
    check_error("x = 'abc\\'", 1, 5, "unterminated string literal");
    check_error("x = 'abc\\", 1, 5, "unterminated string literal");
    check_error("\n  x = '''abc\n\n", 2, 7, "unterminated triple-quoted string literal");
    check_error("x = \"\"\"abc\"\"", 1, 5, "unterminated triple-quoted string literal");
    check_error("x = 'a\\qb'", 1, 7, "unsupported escape sequence '\\q'");
    check_error("x = 'a\\x41'", 1, 7, "unsupported escape sequence '\\x'");
    check_error("x = f'a'", 1, 5, "string prefixes are not supported");
    check_error("x = rb\"a\"", 1, 5, "string prefixes are not supported");
    check_error("x = U'a'", 1, 5, "string prefixes are not supported");
}

static void test_error_characters(void **state) {
    check_error("x = $y", 1, 5, "invalid character '$'");
    check_error("x = a ? b", 1, 7, "invalid character '?'");
    check_error("x = !a", 1, 5, "invalid character '!'");
    check_error("x = `a`", 1, 5, "invalid character '`'");
    check_error("x = \x7f", 1, 5, "invalid character '\\x7f'");
    check_error("x = \x01", 1, 5, "invalid character '\\x01'");
    check_error("x = \xe2\x82\xac", 1, 5, "invalid character '\xe2\x82\xac' (U+20AC)");
    check_error("x = \xc3\xa9t\xc3\xa9", 1, 5, "invalid character '\xc3\xa9' (U+00E9)");
    check_error("x = \xff", 1, 5, "invalid character '\\xff'");
    check_error("x = \xe2\x82", 1, 5, "invalid character '\\xe2'"); /* truncated UTF-8 */
    check_error("x = \xc0\x80", 1, 5, "invalid character '\\xc0'"); /* overlong */
    check_error_n("x = 1\0 + 2", 10, NULL, MT_ERR_SYNTAX, 1, 6, "invalid character '\\x00'");
    check_error_n("x = 'a\0b'", 9, NULL, MT_ERR_SYNTAX, 1, 7, "invalid character '\\x00'");
    check_error_n("x = 1 # a\0b", 11, NULL, MT_ERR_SYNTAX, 1, 10, "invalid character '\\x00'");
    check_error("x = 1 \\ 2", 1, 7, "unexpected character after line continuation character");
    check_error("x = 1 + \\", 1, 9, "unexpected end of file after line continuation character");
}

static void test_error_brackets(void **state) {
    check_error("x = a)\n", 1, 6, "unmatched ')'");
    check_error("x = ]", 1, 5, "unmatched ']'");
    check_error("x = {a}}", 1, 8, "unmatched '}'");
    check_error("x = [\n  (a, b]", 2, 8, "closing ']' does not match '(' at 2:3");
    check_error("x = {a)", 1, 7, "closing ')' does not match '{' at 1:5");
    check_error("def f(a,\n      b:\n", 3, 1,
                "unexpected end of file: ')' expected (to close '(' at 1:6)");
    check_error("x = [1, (2", 1, 11, "unexpected end of file: ')' expected (to close '(' at 1:9)");
    check_error("x = [1, (2)", 1, 12, "unexpected end of file: ']' expected (to close '[' at 1:5)");
}

static void test_error_numbers(void **state) {
    check_error("x = 9223372036854775808", 1, 5,
                "integer literal is too large (does not fit in int64)");
    check_error("x = 99999999999999999999999", 1, 5,
                "integer literal is too large (does not fit in int64)");
    check_error("x = 0x8000000000000000", 1, 5,
                "integer literal is too large (does not fit in int64)");
    check_error("x = 0x", 1, 7, "invalid hexadecimal literal");
    check_error("x = 0xg", 1, 7, "invalid hexadecimal literal");
    check_error("x = 0b102", 1, 9, "invalid digit '2' in binary literal");
    check_error("x = 0o8", 1, 7, "invalid digit '8' in octal literal");
    check_error("x = 0b", 1, 7, "invalid binary literal");
    check_error("x = 0x__1", 1, 7, "invalid hexadecimal literal");
    check_error("x = 1__0", 1, 6, "invalid decimal literal");
    check_error("x = 1_", 1, 6, "invalid decimal literal");
    check_error("x = 1_.5", 1, 6, "invalid decimal literal");
    check_error("x = 1._5", 1, 7, "invalid decimal literal");
    check_error("x = 1e", 1, 6, "invalid decimal literal");
    check_error("x = 1e+", 1, 6, "invalid decimal literal");
    check_error("x = 2.5ex", 1, 8, "invalid decimal literal");
    check_error("x = 1abc", 1, 6, "invalid decimal literal");
    check_error("x = 1.5f", 1, 8, "invalid decimal literal");
    check_error("x = 0x1fg", 1, 9, "invalid hexadecimal literal");
    check_error("x = 012", 1, 5,
                "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
                "for octal integers");
    check_error_n("x = 2j", 6, NULL, MT_ERR_UNSUPPORTED, 1, 6,
                  "complex literals are not supported in minitriton kernels");
}

static void test_error_limits(void **state) {
    mt_lex_limits lim = {0};
    lim.max_source_bytes = 8;
    check_error_n("x = 1 + 2\n", 10, &lim, MT_ERR_LIMIT, 0, 0,
                  "source is too large (10 bytes; the limit is 8)");
    lim = (mt_lex_limits){0};
    lim.max_tokens = 5;
    int n;
    lex_n("x = 1\n", 6, &n, &lim); /* 4 tokens + EOF */
    check_error_n("x = 1 + 2\n", 10, &lim, MT_ERR_LIMIT, 1, 10, "too many tokens (more than 5)");
    lim = (mt_lex_limits){0};
    lim.max_indent_depth = 2;
    lex_n("a\n b\n  c\n", 9, &n, &lim);
    check_error_n("a\n b\n  c\n   d\n", 14, &lim, MT_ERR_LIMIT, 4, 4,
                  "too many indentation levels (more than 2)");

    /* the defaults */
    size_t big = ((size_t)16 << 20) + 1;
    char *src = malloc(big);
    memset(src, ' ', big);
    check_error_n(src, big, NULL, MT_ERR_LIMIT, 0, 0,
                  "source is too large (16777217 bytes; the limit is 16777216)");
    free(src);
    char deep[40000];
    size_t len = 0;
    for (int i = 0; i <= 101; i++) {
        memset(deep + len, ' ', (size_t)i);
        len += (size_t)i;
        memcpy(deep + len, "a\n", 2);
        len += 2;
    }
    check_error_n(deep, len, NULL, MT_ERR_LIMIT, 102, 102,
                  "too many indentation levels (more than 100)");
    size_t ntoks = 1000001;
    char *many = malloc(ntoks * 2);
    for (size_t i = 0; i < ntoks; i++) memcpy(many + 2 * i, "a ", 2);
    check_error_n(many, ntoks * 2, NULL, MT_ERR_LIMIT, 1, 2000001,
                  "too many tokens (more than 1000000)");
    free(many);
}

static void test_error_rendering(void **state) {
    const char *src = "x = 1\nif y:\n    z = (a +\n         b]\n";
    mt_errframe f;
    int n;
    if (MT_TRY(&f)) {
        mt_lex(arena, src, strlen(src), NULL, &n);
        mt_err_pop(&f);
        fail();
    } else {
        mt_err_pop(&f);
        mt_diag d;
        mt_diag_from_frame(&d, &f, "k.py", src);
        assert_int_equal(d.status, MT_ERR_SYNTAX);
        assert_int_equal(d.line, 4);
        assert_int_equal(d.col, 11);
        assert_string_equal(d.message, "closing ']' does not match '(' at 3:9");
        assert_string_equal(d.text, "k.py:4:11: error: closing ']' does not match '(' at 3:9\n"
                                    "         b]\n"
                                    "          ^\n");
    }
}

/* ---- robustness ------------------------------------------------------------------------ */

/* Lexes src[0..len) in an error frame: it must succeed or fail with a user
 * error (never an internal one), and never read past len (ASan). */
static void lex_any(const char *src, size_t len) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, src, len);
    mt_arena *a = mt_arena_create();
    mt_errframe f;
    int n = 0;
    if (MT_TRY(&f)) {
        mt_token *t = mt_lex(a, copy, len, NULL, &n);
        mt_err_pop(&f);
        assert_true(n >= 1);
        assert_int_equal(t[n - 1].kind, TK_EOF);
        int indents = 0;
        for (int i = 0; i < n; i++) {
            indents += t[i].kind == TK_INDENT ? 1 : t[i].kind == TK_DEDENT ? -1 : 0;
            assert_true(indents >= 0);
            assert_true(t[i].loc.line >= 1 && t[i].loc.col >= 1);
        }
        assert_int_equal(indents, 0);
    } else {
        mt_err_pop(&f);
        assert_true(f.status == MT_ERR_SYNTAX || f.status == MT_ERR_UNSUPPORTED ||
                    f.status == MT_ERR_LIMIT);
        assert_true(f.msg[0] != 0);
    }
    mt_arena_destroy(a);
    free(copy);
}

static const char *const samples[] = {
    "def add(a: Tensor(shape=(2, 3), dtype=\"float32\"), b: Tensor((2, 3), \"float32\")):\n"
    "    out = a + b\n"
    "    out = out + a\n"
    "    return out\n",
    "@T.prim_func\n"
    "def k(x: T.Buffer((2, 3), \"float32\"), out: T.Buffer((2, 3), \"float32\")):\n"
    "    for i, j in T.grid(2, 3):\n"
    "        with T.block(\"add\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            out[vi, vj] = x[vi, vj] * 2.5e-3 + 0x1f\n",
    "x = '''doc\nstring''' ; y = \"a\\n\" \\\n  + 'b' # c\nif x: pass\n",
    "a = [1_000, .5, 1., 1e-5, 0b1, 0o7, {1: 2}, (3,)]\r\n\tb\n",
};

static void test_robust_prefixes(void **state) {
    for (int s = 0; s < (int)(sizeof samples / sizeof samples[0]); s++) {
        size_t len = strlen(samples[s]);
        for (size_t i = 0; i <= len; i++) lex_any(samples[s], i);
    }
}

static void test_robust_random(void **state) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    static const char alphabet[] = "ab_0123456789xeEjJ.'\"\\#()[]{}:;,=+-*/%@<>!&|^~ \t\n\r\f$\0\x80\xc3\xa9";
    char buf[256];
    for (int iter = 0; iter < 20000; iter++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = (size_t)(seed >> 33) % sizeof buf;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(seed >> 40);
            buf[i] = iter % 2 ? (char)r : alphabet[r % (sizeof alphabet - 1)];
        }
        lex_any(buf, len);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_simple_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_trailing_newline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operators, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keywords, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kind_str, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indentation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dedent_several_and_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crlf_and_cr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_implicit_joining, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explicit_joining, setup, teardown),
        cmocka_unit_test_setup_teardown(test_semicolons_and_same_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_form_feed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bom, setup, teardown),
        cmocka_unit_test_setup_teardown(test_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_floats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_triple_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_columns_count_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_indentation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_characters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_brackets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_rendering, setup, teardown),
        cmocka_unit_test(test_robust_prefixes),
        cmocka_unit_test(test_robust_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
