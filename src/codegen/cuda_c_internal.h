/*
 * cuda_c_internal.h -- what the files of the CUDA C printer share. Private
 * to src/codegen.
 *
 * cuda_c.c owns the C names, the statements, the kernels and the
 * translation unit (mt_cuda_c_emit); cuda_c_expr.c the expressions (C
 * types, immediates, precedence, the CPU's semantics); cuda_c_mem.c lets,
 * allocations, stores, the vector accesses and the wmma calls. All work
 * on one mt_cu, the state of printing one unit; errors are mt_ice (the
 * input is verified TIR).
 */
#ifndef MT_CODEGEN_CUDA_C_INTERNAL_H
#define MT_CODEGEN_CUDA_C_INTERNAL_H

#include <stdbool.h>

#include "codegen/cuda_c_helpers.h"
#include "support/arena.h"
#include "support/nameset.h"
#include "support/ptrmap.h"
#include "support/strbuf.h"
#include "tir/tir.h"

/* The scalar variables standing for the lanes of a vector value: a vector
 * load hoisted into a vector const, or a vector let. */
typedef struct mt_cu_vbind {
    const mt_texpr *load; /* the load, or NULL */
    const mt_tvar *var;   /* the let's variable, or NULL */
    mt_tvar **lane;       /* one per lane, each bound to its C text ("a_v.x", "t_1") */
} mt_cu_vbind;

/* C names of one kernel (or one launch comment). */
typedef struct mt_cu_names {
    mt_nameset live;             /* C name -> declarations of it in open blocks */
    mt_nameset next;             /* base name -> first suffix worth trying */
    MT_VEC(const char *) open;   /* names declared in the open blocks, innermost last */
    mt_ptrmap obj;               /* var or buffer -> 1 + index in text of its name */
    MT_VEC(const char *) text;
} mt_cu_names;

typedef struct mt_cu {
    mt_arena *a;
    mt_sb sb;                    /* the kernels' text */
    bool used[H_COUNT_];         /* helpers the text calls */
    bool fp16;                   /* the text uses __half */
    bool bf16;                   /* the text uses __nv_bfloat16 */
    bool wmma;                   /* the text uses nvcuda::wmma (mma.h) */
    mt_ptrmap wmma_mem;          /* per kernel: buffers a wmma intrinsic addresses (32-byte aligned) */
    MT_VEC(const mt_tlaunch *) launches; /* every launch of the host functions */
    MT_VEC(const char *) knames; /* the kernels' C names, in device order */
    /* per kernel */
    mt_cu_names nm;
    bool free_vars;              /* an unbound variable gets a name (launch comments) */
    mt_ptrmap half_params;       /* 16-bit float scalar params: __half or __nv_bfloat16, read
                                    with __half2float / __bfloat162float (value: the dtype + 1) */
    const mt_tlaunch *launch;    /* the kernel's launch, or NULL */
    MT_VEC(mt_cu_vbind) vb;            /* the vector values in scope, innermost last */
    int ind;                     /* indentation of the current line */
} mt_cu;

/* Where a statement is: what may follow it. */
typedef struct mt_cu_pos {
    bool kernel_tail; /* nothing of the kernel runs after it */
    bool block_tail;  /* nothing follows it in its C block */
    bool in_phase;    /* inside a threadIdx loop */
} mt_cu_pos;

/* C binding strength of printed text, loosest first. */
enum { C_TERN = 1, C_OR, C_AND, C_EQ, C_REL, C_ADD, C_MUL, C_UNARY, C_ATOM };

/* How an expression prints: pre kid0 sep[0] kid1 sep[1] kid2 post. */
typedef struct mt_cu_form {
    int prec;                   /* how tightly the text binds (C_*) */
    bool ll;                    /* its C type is long long (int64 values) */
    const char *pre, *sep[2], *post;
    int n;                      /* operands (kids) */
    const mt_texpr *kid[3];
    int kid_prec[3];            /* the binding each kid needs to go without parentheses */
    bool kid_ll[3];             /* kid must print as a long long */
} mt_cu_form;

/* ---- names (cuda_c.c) ---- */

/* A name from base not in scope, declared in the innermost open block. */
const char *mt_cu_fresh(mt_cu *c, const char *base);
/* Closes the C blocks opened since mark (a length of nm.open). */
void mt_cu_close_names(mt_cu *c, int mark);
/* key (a var or buffer) called name from now on; returns what to restore. */
int mt_cu_bind(mt_cu *c, const void *key, const char *name);
void mt_cu_unbind(mt_cu *c, const void *key, int old);
/* The C name of key (a var or buffer). */
const char *mt_cu_name_of(mt_cu *c, const void *key, const char *base);

/* ---- lines and statements (cuda_c.c) ---- */

void mt_cu_line_start(mt_cu *c);
void mt_cu_line(mt_cu *c, const char *text);
void mt_cu_put_stmt(mt_cu *c, const mt_tstmt *s, mt_cu_pos p);

/* ---- expressions (cuda_c_expr.c) ---- */

/* The C type a value of dtype t is computed in. */
const char *mt_cu_ctype(mt_dtype t);
/* The C type of a buffer element or a scalar param of dtype t. */
const char *mt_cu_mem_type(mt_cu *c, mt_dtype t);
/* x (of dtype from) converted to dtype to, as mt_cg_cast does. */
mt_cu_form mt_cu_cast_form(mt_cu *c, const mt_texpr *x, mt_dtype from, mt_dtype to);
/* The value v as an element of a buffer of dtype to. */
mt_cu_form mt_cu_store_form(mt_cu *c, const mt_texpr *v, mt_dtype to);
/* Lane k of e (mt_arith_lane with the vector values in scope). */
mt_texpr *mt_cu_lane(mt_cu *c, const mt_texpr *e, int k);
/* f printed, in parentheses when it binds looser than min (C_*). */
void mt_cu_put_form(mt_cu *c, const mt_cu_form *f, int min);
void mt_cu_put_expr(mt_cu *c, const mt_texpr *e, int min);

/* ---- memory (cuda_c_mem.c) ---- */

void mt_cu_put_let(mt_cu *c, const mt_tstmt *s, mt_cu_pos p);
void mt_cu_put_alloc(mt_cu *c, const mt_tstmt *s, mt_cu_pos p);
void mt_cu_put_store(mt_cu *c, const mt_tstmt *s);
/* T.wmma_*(...) (tir.h) as the WMMA API's calls. */
void mt_cu_put_wmma(mt_cu *c, const mt_texpr *e);

#endif
