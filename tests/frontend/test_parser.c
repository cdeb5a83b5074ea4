/*
 * test_parser.c -- unit tests of the parser and the AST printer
 * (src/frontend/parser.c, ast.c).
 *
 * Golden tests: each tests/frontend/golden/NAME.py parses to exactly the
 * text in NAME.ast (run with MT_UPDATE_GOLDEN=1 to rewrite the .ast files
 * after a deliberate format change, then review the diff). Short cases are
 * inline. Then every parser error with its status, place and message, the
 * depth guard, and a robustness run: truncated prefixes of every golden
 * source, single-byte mutations, random token soup and random bytes must all
 * parse or fail cleanly (run it under the ASan build too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/parser.h"

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

/* Parses src and returns the printed AST; fails the test on an error. */
static const char *parse_print(const char *src, size_t len, const mt_parse_limits *lim) {
    mt_errframe f;
    const char *volatile out = NULL; /* set inside MT_TRY */
    if (MT_TRY(&f)) {
        mt_ast *m = mt_parse(arena, src, len, lim);
        out = mt_ast_print(arena, m);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        fail_msg("unexpected error %d at %d:%d: %s\nin:\n%s", f.status, f.loc.line, f.loc.col,
                 f.msg, src);
    }
    return out;
}

static void check_ast(const char *src, const char *expected) {
    const char *got = parse_print(src, strlen(src), NULL);
    if (strcmp(got, expected) != 0)
        fail_msg("for:\n%s\ngot:\n%s\nexpected:\n%s", src, got, expected);
}

/* Asserts that parsing src fails with exactly this status, place, message. */
static void check_error_lim(const char *src, const mt_parse_limits *lim, mt_status st, int line,
                            int col, const char *msg) {
    mt_errframe f;
    if (MT_TRY(&f)) {
        mt_parse(arena, src, strlen(src), lim);
        mt_err_pop(&f);
        fail_msg("no error for:\n%s", src);
    } else {
        mt_err_pop(&f);
        if (f.status != st || f.loc.line != line || f.loc.col != col || strcmp(f.msg, msg) != 0)
            fail_msg("for:\n%s\n  got      %d @%d:%d %s\n  expected %d @%d:%d %s", src, f.status,
                     f.loc.line, f.loc.col, f.msg, st, line, col, msg);
    }
}

static void check_error(const char *src, int line, int col, const char *msg) {
    check_error_lim(src, NULL, MT_ERR_SYNTAX, line, col, msg);
}

static void check_unsupported(const char *src, int line, int col, const char *msg) {
    check_error_lim(src, NULL, MT_ERR_UNSUPPORTED, line, col, msg);
}

/* ---- golden files ------------------------------------------------------------------ */

static const char *const golden_names[] = {
    "dsl_add", "dsl_loop", "precedence", "slicing", "assign", "defs", "control", "unsupported",
};
#define NGOLDEN ((int)(sizeof golden_names / sizeof golden_names[0]))

/* Reads a whole file into the arena; NULL if it cannot be read. */
static char *read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = mt_arena_alloc(arena, (size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    buf[got] = 0;
    if (len) *len = got;
    return buf;
}

static const char *golden_path(const char *name, const char *ext) {
    const char *root = getenv("MT_SOURCE_DIR");
    return mt_arena_printf(arena, "%s/tests/frontend/golden/%s.%s", root ? root : ".", name, ext);
}

static void test_golden(void **state) {
    bool update = getenv("MT_UPDATE_GOLDEN") != NULL;
    for (int i = 0; i < NGOLDEN; i++) {
        size_t len;
        char *src = read_file(golden_path(golden_names[i], "py"), &len);
        if (!src) fail_msg("cannot read %s", golden_path(golden_names[i], "py"));
        const char *got = parse_print(src, len, NULL);
        const char *ast_path = golden_path(golden_names[i], "ast");
        if (update) {
            FILE *fp = fopen(ast_path, "wb");
            assert_non_null(fp);
            fputs(got, fp);
            fclose(fp);
            continue;
        }
        char *expected = read_file(ast_path, NULL);
        if (!expected) fail_msg("cannot read %s", ast_path);
        if (strcmp(got, expected) != 0)
            fail_msg("%s: AST differs from %s\ngot:\n%s", golden_names[i], ast_path, got);
    }
}

/* ---- inline cases -------------------------------------------------------------------- */

/* A lambda (a schedule's index map) parses; the builders refuse it elsewhere. */
static void test_lambda(void **state) {
    check_ast("m = lambda k, j: (j // 16, k)\n", "Module\n"
                                                "  Assign @1:1\n"
                                                "    Name m @1:1\n"
                                                "    Lambda @1:5\n"
                                                "      Param k @1:12\n"
                                                "      Param j @1:15\n"
                                                "      Tuple @1:18\n"
                                                "        BinOp // @1:21\n"
                                                "          Name j @1:19\n"
                                                "          Int 16 @1:24\n"
                                                "        Name k @1:28\n");
    check_ast("lambda: 1\n", "Module\n"
                              "  Expr @1:1\n"
                              "    Lambda @1:1\n"
                              "      Int 1 @1:9\n");
    check_error("m = lambda k j: k\n", 1, 14, "expected ',' or ':' in the lambda's parameters");
    check_error("m = lambda k, 1: k\n", 1, 15, "a lambda's parameters are names");
    check_error("m = lambda k, k: k\n", 1, 15, "duplicate parameter 'k' in lambda");
    check_error("m = lambda k:\n", 1, 14, "expected an expression, found end of line");
}

static void test_precedence(void **state) {
    check_ast("-2**2\n", "Module\n"
                         "  Expr @1:1\n"
                         "    UnaryOp - @1:1\n"
                         "      BinOp ** @1:3\n"
                         "        Int 2 @1:2\n"
                         "        Int 2 @1:5\n");
    check_ast("a + b * c\n", "Module\n"
                             "  Expr @1:1\n"
                             "    BinOp + @1:3\n"
                             "      Name a @1:1\n"
                             "      BinOp * @1:7\n"
                             "        Name b @1:5\n"
                             "        Name c @1:9\n");
    check_ast("a - b - c\n", "Module\n"
                             "  Expr @1:1\n"
                             "    BinOp - @1:7\n"
                             "      BinOp - @1:3\n"
                             "        Name a @1:1\n"
                             "        Name b @1:5\n"
                             "      Name c @1:9\n");
    check_ast("a ** b ** c\n", "Module\n"
                               "  Expr @1:1\n"
                               "    BinOp ** @1:3\n"
                               "      Name a @1:1\n"
                               "      BinOp ** @1:8\n"
                               "        Name b @1:6\n"
                               "        Name c @1:11\n");
    check_ast("a < b < c\n", "Module\n"
                             "  Expr @1:1\n"
                             "    Compare < < @1:3\n"
                             "      Name a @1:1\n"
                             "      Name b @1:5\n"
                             "      Name c @1:9\n");
    check_ast("not a == b\n", "Module\n"
                              "  Expr @1:1\n"
                              "    UnaryOp not @1:1\n"
                              "      Compare == @1:7\n"
                              "        Name a @1:5\n"
                              "        Name b @1:10\n");
    check_ast("a is not b not in c\n", "Module\n"
                                       "  Expr @1:1\n"
                                       "    Compare is not not in @1:3\n"
                                       "      Name a @1:1\n"
                                       "      Name b @1:10\n"
                                       "      Name c @1:19\n");
    check_ast("a or b or c and d\n", "Module\n"
                                     "  Expr @1:1\n"
                                     "    BoolOp or @1:3\n"
                                     "      Name a @1:1\n"
                                     "      Name b @1:6\n"
                                     "      BoolOp and @1:13\n"
                                     "        Name c @1:11\n"
                                     "        Name d @1:17\n");
    check_ast("x @ w.T + b\n", "Module\n"
                               "  Expr @1:1\n"
                               "    BinOp + @1:9\n"
                               "      BinOp @ @1:3\n"
                               "        Name x @1:1\n"
                               "        Attribute T @1:6\n"
                               "          Name w @1:5\n"
                               "      Name b @1:11\n");
    check_ast("y = a if c else b\n", "Module\n"
                                     "  Assign @1:1\n"
                                     "    Name y @1:1\n"
                                     "    IfExp @1:5\n"
                                     "      Name c @1:10\n"
                                     "      Name a @1:5\n"
                                     "      Name b @1:17\n");
    check_ast("-x.shape[0]\n", "Module\n"
                               "  Expr @1:1\n"
                               "    UnaryOp - @1:1\n"
                               "      Subscript @1:9\n"
                               "        Attribute shape @1:3\n"
                               "          Name x @1:2\n"
                               "        Int 0 @1:10\n");
}

static void test_literals(void **state) {
    check_ast("x = 'a' \"b\" '''c\nd'''\n", "Module\n"
                                            "  Assign @1:1\n"
                                            "    Name x @1:1\n"
                                            "    Str \"abc\\nd\" @1:5\n");
    check_ast("x = 1.0, 1e16, 0.1, 2.5e-3, 1e999, 3\n", "Module\n"
                                                    "  Assign @1:1\n"
                                                    "    Name x @1:1\n"
                                                    "    Tuple @1:5\n"
                                                    "      Float 1.0 @1:5\n"
                                                    "      Float 1e+16 @1:10\n"
                                                    "      Float 0.1 @1:16\n"
                                                    "      Float 0.0025 @1:21\n"
                                                    "      Float inf @1:29\n"
                                                    "      Int 3 @1:36\n");
    check_ast("x = '\\t\\\\'\n", "Module\n"
                                 "  Assign @1:1\n"
                                 "    Name x @1:1\n"
                                 "    Str \"\\t\\\\\" @1:5\n");
}

static void test_statements(void **state) {
    check_ast("", "Module\n");
    check_ast("\n# comment\n\n", "Module\n");
    check_ast("if x: a = 1; b = 2;\n", "Module\n"
                                       "  If @1:1\n"
                                       "    Name x @1:4\n"
                                       "    Assign @1:7\n"
                                       "      Name a @1:7\n"
                                       "      Int 1 @1:11\n"
                                       "    Assign @1:14\n"
                                       "      Name b @1:14\n"
                                       "      Int 2 @1:18\n");
    check_ast("return\n", "Module\n"
                          "  Return @1:1\n");
    check_ast("return a, b,\n", "Module\n"
                                "  Return @1:1\n"
                                "    Tuple @1:8\n"
                                "      Name a @1:8\n"
                                "      Name b @1:11\n");
    check_ast("for *a, b in c, d: pass\n", "Module\n"
                                           "  For @1:1\n"
                                           "    Tuple @1:5\n"
                                           "      Starred @1:5\n"
                                           "        Name a @1:6\n"
                                           "      Name b @1:9\n"
                                           "    Tuple @1:14\n"
                                           "      Name c @1:14\n"
                                           "      Name d @1:17\n"
                                           "    Pass @1:20\n");
    /* parenthesized with items (Python 3.9+) versus a parenthesized expression */
    check_ast("with (a as b, c,):\n    pass\nwith (a, b) as c: pass\n", "Module\n"
              "  With @1:1\n"
              "    WithItem @1:7\n"
              "      Name a @1:7\n"
              "      Name b @1:12\n"
              "    WithItem @1:15\n"
              "      Name c @1:15\n"
              "    Pass @2:5\n"
              "  With @3:1\n"
              "    WithItem @3:6\n"
              "      Tuple @3:6\n"
              "        Name a @3:7\n"
              "        Name b @3:10\n"
              "      Name c @3:16\n"
              "    Pass @3:19\n");
    check_ast("def f():\n    \"\"\"Only a docstring.\"\"\"\n", "Module\n"
                                                              "  FunctionDef f @1:1\n"
                                                              "    doc \"Only a docstring.\"\n");
    check_ast("def f(): return 1\n", "Module\n"
                                     "  FunctionDef f @1:1\n"
                                     "    Return @1:10\n"
                                     "      Int 1 @1:17\n");
    check_ast("def f(\n    a,\n    b,\n):\n    pass\n", "Module\n"
                                                       "  FunctionDef f @1:1\n"
                                                       "    Param a @2:5\n"
                                                       "    Param b @3:5\n"
                                                       "    Pass @5:5\n");
}

static void test_kind_str_and_print(void **state) {
    assert_string_equal(mt_ast_kind_str(AST_MODULE), "Module");
    assert_string_equal(mt_ast_kind_str(AST_FUNCDEF), "FunctionDef");
    assert_string_equal(mt_ast_kind_str(AST_BINOP), "BinOp");
    assert_string_equal(mt_ast_kind_str(AST_ELLIPSIS), "Ellipsis");
    assert_string_equal(mt_ast_kind_str(AST_COUNT_), "?");
    assert_string_equal(mt_ast_print(arena, NULL), "");
    /* hand-built nodes print too */
    mt_ast *m = mt_ast_new(arena, AST_MODULE, mt_loc_make(1, 1));
    mt_ast *s = mt_ast_new(arena, AST_PASS, mt_loc_make(3, 4));
    mt_ast_push(arena, &m->body, s);
    assert_string_equal(mt_ast_print(arena, m), "Module\n  Pass @3:4\n");
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors_headers(void **state) {
    check_error("if x\n    pass\n", 1, 5, "expected ':' after 'if' condition");
    check_error("if a:\n    pass\nelif b\n    pass\n", 3, 7, "expected ':' after 'elif' condition");
    check_error("if a:\n    pass\nelse\n    pass\n", 3, 5, "expected ':' after 'else'");
    check_error("while x\n", 1, 8, "expected ':' after 'while' condition");
    check_error("for i in x\n", 1, 11, "expected ':' after 'for' iterable");
    check_error("for i x:\n", 1, 7, "expected 'in' after 'for' target, found 'x'");
    check_error("with a as b\n", 1, 12, "expected ':' after 'with' items");
    check_error("def f(x)\n", 1, 9, "expected ':' after the function signature");
    check_error("def (x):\n", 1, 5, "expected a function name after 'def', found '('");
    check_error("def f:\n", 1, 6, "expected '(' after the function name, found ':'");
    check_error("def f(1):\n", 1, 7, "expected a parameter name, found '1'");
    check_error("def f(a b):\n", 1, 9, "expected ',' or ')' (to close '(' at 1:6), found 'b'");
    check_error("def f(a, a):\n", 1, 10, "duplicate parameter 'a' in function definition");
    check_error("def f(a=1, b):\n", 1, 12,
                "parameter without a default follows parameter with a default");
    check_error("@deco\nx = 1\n", 2, 1, "expected 'def' after decorator, found 'x'");
    check_error("@deco x\ndef f(): pass\n", 1, 7, "expected end of line after decorator, found 'x'");
}

static void test_errors_blocks(void **state) {
    check_error("def f():\nreturn 1\n", 2, 1, "expected an indented block after 'def'");
    check_error("if x:\n", 2, 1, "expected an indented block after 'if'");
    check_error("for i in x:\n# nothing\n", 3, 1, "expected an indented block after 'for'");
    check_error("def f():\n    if x:\n    y = 1\n", 3, 5, "expected an indented block after 'if'");
    check_error("if x:\n    pass\nelse:\nz\n", 4, 1, "expected an indented block after 'else'");
    check_error("  x = 1\n", 1, 3, "unexpected indent");
    check_error("x = 1\n    y = 2\n", 2, 5, "unexpected indent");
    check_error("else:\n  pass\n", 1, 1, "'else' without a matching 'if', 'for' or 'while'");
    check_error("elif x:\n  pass\n", 1, 1, "'elif' without a matching 'if'");
    check_error("except:\n  pass\n", 1, 1, "'except' without a matching 'try'");
    check_error("finally:\n  pass\n", 1, 1, "'finally' without a matching 'try'");
}

static void test_errors_expressions(void **state) {
    check_error("x = (1 + )\n", 1, 10, "expected an expression, found ')'");
    check_error("x = \n", 1, 5, "expected an expression, found end of line");
    check_error("x = a[]\n", 1, 7, "expected an expression, found ']'");
    check_error("x = if\n", 1, 5, "expected an expression, found 'if'");
    check_error("x = 1 +\n", 1, 8, "expected an expression, found end of line");
    check_error("f(a b)\n", 1, 5, "expected ',' or ')' (to close '(' at 1:2), found 'b'");
    check_error("x = [1 2]\n", 1, 8, "expected ',' or ']' (to close '[' at 1:5), found '2'");
    check_error("x = (1 2)\n", 1, 8, "expected ')' (to close '(' at 1:5), found '2'");
    check_error("x = (1, 2 3)\n", 1, 11, "expected ',' or ')' (to close '(' at 1:5), found '3'");
    check_error("x = {1: 2 3}\n", 1, 11, "expected ',' or '}' (to close '{' at 1:5), found '3'");
    check_error("x = {1: 2, 3}\n", 1, 13, "expected ':' after dict key, found '}'");
    check_error("x[1 2]\n", 1, 5, "expected ',' or ']' (to close '[' at 1:2), found '2'");
    check_error("x = a.(b)\n", 1, 7, "expected an attribute name after '.', found '('");
    check_error("x = a.'s'\n", 1, 7, "expected an attribute name after '.', found a string");
    check_error("x = a if b\n", 1, 11, "expected 'else' after 'if' expression");
    check_error("x = 1 2\n", 1, 7, "expected end of line after statement, found '2'");
    check_error("x = = 2\n", 1, 5, "expected an expression, found '='");
    check_error("a not b\n", 1, 3, "expected end of line after statement, found 'not'");
    check_error("print 'hello'\n", 1, 7, "expected end of line after statement, found a string");
    check_error("f(a=1, b)\n", 1, 8, "positional argument follows keyword argument");
    check_error("f(a=1, a=2)\n", 1, 8, "keyword argument repeated: 'a'");
    check_error("f(a.b=1)\n", 1, 3, "expression cannot contain assignment, perhaps you meant \"==\"?");
    check_error("f(1=1)\n", 1, 3, "expression cannot contain assignment, perhaps you meant \"==\"?");
}

static void test_errors_targets(void **state) {
    check_error("1 = x\n", 1, 1, "invalid assignment target");
    check_error("f(x) = 1\n", 1, 2, "invalid assignment target");
    check_error("a + b = c\n", 1, 3, "invalid assignment target");
    check_error("(a, 1) = x\n", 1, 5, "invalid assignment target");
    check_error("a = b + 1 = c\n", 1, 7, "invalid assignment target");
    check_error("for f() in x:\n    pass\n", 1, 6, "invalid assignment target");
    check_error("with a as 1:\n    pass\n", 1, 11, "invalid assignment target");
    check_error("a, b += 1\n", 1, 1, "invalid augmented assignment target");
    check_error("f() += 1\n", 1, 2, "invalid augmented assignment target");
}

static void test_errors_unsupported(void **state) {
    check_unsupported("x = yield\n", 1, 5, "'yield' expressions are not supported in minitriton kernels");
    check_unsupported("x = await y\n", 1, 5, "'await' expressions are not supported in minitriton kernels");
    check_unsupported("x = [i for i in y]\n", 1, 8, "comprehensions are not supported in minitriton kernels");
    check_unsupported("x = f(i for i in y)\n", 1, 9, "comprehensions are not supported in minitriton kernels");
    check_unsupported("x = (i for i in y)\n", 1, 8, "comprehensions are not supported in minitriton kernels");
    check_unsupported("x = {k: v for k in y}\n", 1, 11, "comprehensions are not supported in minitriton kernels");
    check_unsupported("x = {1, 2}\n", 1, 5, "set literals are not supported in minitriton kernels");
    check_unsupported("x = {1}\n", 1, 5, "set literals are not supported in minitriton kernels");
    check_unsupported("x = {**a}\n", 1, 6, "dict unpacking ('**') is not supported in minitriton kernels");
    check_unsupported("x = (y := 1)\n", 1, 8,
                      "assignment expressions (':=') are not supported in minitriton kernels");
    check_unsupported("x: int = 1\n", 1, 2, "variable annotations are not supported in minitriton kernels");
    check_unsupported("f(**kw)\n", 1, 3, "'**' arguments are not supported in minitriton kernels");
    check_unsupported("def f(*args): pass\n", 1, 7,
                      "'*args' and '**kwargs' parameters are not supported in minitriton kernels");
    check_unsupported("def f(a, **kw): pass\n", 1, 10,
                      "'*args' and '**kwargs' parameters are not supported in minitriton kernels");
    check_unsupported("def f(a, *, b): pass\n", 1, 10,
                      "keyword-only markers ('*') are not supported in minitriton kernels");
    check_unsupported("def f(a, /): pass\n", 1, 10,
                      "positional-only markers ('/') are not supported in minitriton kernels");
    /* a lexer error surfaces through mt_parse unchanged */
    check_error("x = (1,\n", 2, 1, "unexpected end of file: ')' expected (to close '(' at 1:5)");
}

static void test_error_rendering(void **state) {
    const char *src = "def f(a):\n    if a > 0\n        return a\n";
    mt_errframe f;
    if (MT_TRY(&f)) {
        mt_parse(arena, src, strlen(src), NULL);
        mt_err_pop(&f);
        fail();
    } else {
        mt_err_pop(&f);
        mt_diag d;
        mt_diag_from_frame(&d, &f, "kernel.py", src);
        assert_int_equal(d.status, MT_ERR_SYNTAX);
        assert_string_equal(d.text, "kernel.py:2:13: error: expected ':' after 'if' condition\n"
                                    "    if a > 0\n"
                                    "            ^\n");
    }
}

/* ---- the depth guard -------------------------------------------------------------------- */

/* "x = " + n copies of open + "1" + n copies of close. */
static char *nested(const char *open, const char *close, int n) {
    size_t lo = strlen(open), lc = strlen(close);
    char *s = mt_arena_alloc(arena, 8 + (size_t)n * (lo + lc));
    char *w = s;
    memcpy(w, "x = ", 4);
    w += 4;
    for (int i = 0; i < n; i++, w += lo) memcpy(w, open, lo);
    *w++ = '1';
    for (int i = 0; i < n; i++, w += lc) memcpy(w, close, lc);
    *w++ = '\n';
    *w = 0;
    return s;
}

static void test_depth_guard(void **state) {
    const char *msg = "nesting too deep (more than 200 levels)";
    parse_print(nested("(", ")", 200), strlen(nested("(", ")", 200)), NULL);
    check_error_lim(nested("(", ")", 201), NULL, MT_ERR_LIMIT, 1, 205, msg);
    check_error_lim(nested("[", "]", 201), NULL, MT_ERR_LIMIT, 1, 205, msg);
    check_error_lim(nested("{1: ", "}", 201), NULL, MT_ERR_LIMIT, 1, 805, msg);
    check_error_lim(nested("f(", ")", 201), NULL, MT_ERR_LIMIT, 1, 406, msg);
    check_error_lim(nested("a[", "]", 201), NULL, MT_ERR_LIMIT, 1, 406, msg);
    check_error_lim(nested("-", "", 201), NULL, MT_ERR_LIMIT, 1, 205, msg);
    check_error_lim(nested("not ", "", 201), NULL, MT_ERR_LIMIT, 1, 805, msg);
    check_error_lim(nested("1 ** ", "", 201), NULL, MT_ERR_LIMIT, 1, 1007, msg);
    check_error_lim(nested("1 if 1 else ", "", 201), NULL, MT_ERR_LIMIT, 1, 2412, msg);
    /* left-deep chains nest in the tree without recursing in the parser: they
     * count too, so that recursive consumers of the AST are safe */
    parse_print(nested("a + ", "", 200), strlen(nested("a + ", "", 200)), NULL);
    check_error_lim(nested("a + ", "", 201), NULL, MT_ERR_LIMIT, 1, 807, msg);
    check_error_lim(nested("a * b + ", "", 201), NULL, MT_ERR_LIMIT, 1, 1599, msg);
    char *attrs = mt_arena_alloc(arena, 1024), *w;
    w = attrs + sprintf(attrs, "x = a");
    for (int i = 0; i < 201; i++) w += sprintf(w, ".b");
    check_error_lim(attrs, NULL, MT_ERR_LIMIT, 1, 406, msg);
    check_error_lim(nested("", "[0]", 201), NULL, MT_ERR_LIMIT, 1, 606, msg);
    check_error_lim(nested("", "()", 201), NULL, MT_ERR_LIMIT, 1, 406, msg);
    char *elifs = mt_arena_alloc(arena, 8192);
    w = elifs + sprintf(elifs, "if a: pass\n");
    for (int i = 0; i < 201; i++) w += sprintf(w, "elif a: pass\n");
    check_error_lim(elifs, NULL, MT_ERR_LIMIT, 202, 1, msg);
    /* far beyond the limit: an error, not a stack overflow */
    check_error_lim(nested("(", ")", 100000), NULL, MT_ERR_LIMIT, 1, 205, msg);
    check_error_lim(nested("-", "", 100000), NULL, MT_ERR_LIMIT, 1, 205, msg);
    check_error_lim(nested("a + ", "", 100000), NULL, MT_ERR_LIMIT, 1, 807, msg);

    /* a custom limit, and statement nesting */
    mt_parse_limits lim = {0};
    lim.max_depth = 10;
    lim.lex.max_indent_depth = 1000;
    check_error_lim(nested("(", ")", 11), &lim, MT_ERR_LIMIT, 1, 15,
                    "nesting too deep (more than 10 levels)");
    char *src = mt_arena_alloc(arena, 4096);
    w = src;
    for (int i = 0; i < 12; i++) w += sprintf(w, "%*sif x:\n", i, "");
    sprintf(w, "%*spass\n", 12, "");
    check_error_lim(src, &lim, MT_ERR_LIMIT, 12, 12, "nesting too deep (more than 10 levels)");
    lim.max_depth = 12;
    parse_print(src, strlen(src), &lim);
}

/* ---- robustness ---------------------------------------------------------------------------- */

/* Parses src[0..len) (a malloc'd copy of exactly len bytes, so ASan sees any
 * overread) in an error frame: it must parse and print, or fail with a user
 * error; never crash, never an internal error. */
static void parse_any(const char *src, size_t len) {
    char *copy = malloc(len ? len : 1);
    memcpy(copy, src, len);
    mt_arena *a = mt_arena_create();
    mt_errframe f;
    if (MT_TRY(&f)) {
        mt_ast *m = mt_parse(a, copy, len, NULL);
        const char *text = mt_ast_print(a, m);
        mt_err_pop(&f);
        assert_non_null(text);
        assert_memory_equal(text, "Module\n", 7);
    } else {
        mt_err_pop(&f);
        if (f.status != MT_ERR_SYNTAX && f.status != MT_ERR_UNSUPPORTED &&
            f.status != MT_ERR_LIMIT)
            fail_msg("status %d (%s) for:\n%.*s", f.status, f.msg, (int)len, src);
        assert_true(f.msg[0] != 0);
    }
    mt_arena_destroy(a);
    free(copy);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng >> 33) % n;
}

static void test_robust_prefixes(void **state) {
    for (int i = 0; i < NGOLDEN; i++) {
        size_t len;
        char *src = read_file(golden_path(golden_names[i], "py"), &len);
        assert_non_null(src);
        for (size_t n = 0; n <= len; n++) parse_any(src, n);
    }
}

static void test_robust_mutations(void **state) {
    static const char bytes[] = " \n\t()[]{}:;,.=+-*/'\"\\#@!x1_e";
    for (int i = 0; i < NGOLDEN; i++) {
        size_t len;
        char *src = read_file(golden_path(golden_names[i], "py"), &len);
        char *buf = malloc(len + 1);
        for (int iter = 0; iter < 300; iter++) {
            memcpy(buf, src, len);
            size_t n = len;
            for (int k = 0, edits = 1 + (int)rnd(3); k < edits && n; k++) {
                size_t at = rnd((unsigned)n);
                switch (rnd(3)) {
                case 0: buf[at] = bytes[rnd(sizeof bytes - 1)]; break;
                case 1: memmove(buf + at, buf + at + 1, n - at - 1), n--; break;
                default: buf[at] = (char)rnd(256); break;
                }
            }
            parse_any(buf, n);
        }
        free(buf);
    }
}

static void test_robust_token_soup(void **state) {
    static const char *const words[] = {
        "def", "f", "(", ")", ":", "\n", "\n    ", "\n        ", "x", "=", "1", "2.5", ",",
        "[", "]", "{", "}", "if", "elif", "else", "for", "in", "while", "with", "as", "return",
        "pass", "lambda", "import", "class", "try", "except", "*", "**", "-", "not", "and",
        "or", "is", "@", ".", "'s'", "\"\"\"d\"\"\"", "...", ";", "yield", ":=", "+=", "->",
        "T", "None", "async", "await", "global", "del", "assert", "break", "<", "==", "~",
    };
    const int nwords = (int)(sizeof words / sizeof words[0]);
    char buf[512];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = 0;
        for (int k = 0, count = (int)rnd(40); k < count; k++) {
            const char *w = words[rnd((unsigned)nwords)];
            size_t l = strlen(w);
            if (n + l + 1 >= sizeof buf) break;
            memcpy(buf + n, w, l);
            n += l;
            if (rnd(2)) buf[n++] = ' ';
        }
        parse_any(buf, n);
    }
}

static void test_robust_random_bytes(void **state) {
    char buf[200];
    for (int iter = 0; iter < 5000; iter++) {
        size_t n = rnd(sizeof buf);
        for (size_t i = 0; i < n; i++) buf[i] = (char)rnd(256);
        parse_any(buf, n);
    }
}


/* ---- mt_ast_unparse ------------------------------------------------------ */

/* The expression statement of a one-line source, unparsed within max_len. */
static const char *unparse(const char *expr, size_t max_len) {
    const char *text = parse_print(expr, strlen(expr), NULL); /* fails the test on errors */
    (void)text;
    mt_errframe f;
    const char *volatile out = NULL;
    if (MT_TRY(&f)) {
        mt_ast *m = mt_parse(arena, expr, strlen(expr), NULL);
        out = mt_ast_unparse(arena, m->body.data[0]->lhs, max_len);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        fail_msg("unexpected error: %s", f.msg);
    }
    return out;
}

static void check_unparse(const char *src, const char *want) {
    const char *got = unparse(src, 200);
    if (strcmp(got, want) != 0) fail_msg("unparse of %s: got '%s', want '%s'", src, got, want);
}

static void test_unparse(void **state) {
    check_unparse("a*2.0", "a * 2.0");
    check_unparse("(a  +  1.5) * (-a)**2", "(a + 1.5) * (-a) ** 2");
    check_unparse("a - (b - c)", "a - (b - c)");
    check_unparse("(a - b) - c", "a - b - c");
    check_unparse("a ** b ** c", "a ** b ** c");
    check_unparse("(a ** b) ** c", "(a ** b) ** c");
    check_unparse("-a ** 2", "-a ** 2");
    check_unparse("not a < b and c", "not a < b and c");
    check_unparse("(a or b) and c", "(a or b) and c");
    check_unparse("a if c else b", "a if c else b");
    check_unparse("x is not None", "x is not None");
    check_unparse("a not in b", "a not in b");
    check_unparse("softmax(x - m, axis=-1)", "softmax(x - m, axis=-1)");
    check_unparse("x[..., 1:3, ::2].T", "x[..., 1:3, ::2].T");
    check_unparse("f((a,), [1, 2], 'q\"')", "f((a,), [1, 2], \"q\\\"\")");
    check_unparse("1e-7 + 3.0 + 0.1 + 2", "1e-07 + 3.0 + 0.1 + 2");
    check_unparse("True & ~b", "True & ~b");
}

static void test_unparse_budget(void **state) {
    char src[4096];
    size_t n = 0;
    n += (size_t)snprintf(src + n, sizeof src - n, "a0");
    for (int i = 1; i < 150; i++) n += (size_t)snprintf(src + n, sizeof src - n, " + a%d", i);
    const char *got = unparse(src, 20);
    assert_string_equal(got, "a0 + a1 + a2 + a3...");
    assert_int_equal(strlen(unparse(src, 3)), 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lambda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_literals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statements, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kind_str_and_print, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_expressions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_targets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_unsupported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_rendering, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_guard, setup, teardown),
        cmocka_unit_test_setup_teardown(test_robust_prefixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_robust_mutations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_robust_token_soup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_robust_random_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unparse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unparse_budget, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
