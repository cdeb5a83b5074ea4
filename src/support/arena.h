/*
 * arena.h -- region allocation for one compilation.
 *
 * Tokens, AST, graph IR, TIR and dump text of one compilation live in one
 * arena and are freed together by mt_arena_destroy. Nothing allocated here is
 * freed on its own, which is what makes the longjmp error path (diag.h) leak
 * free: a failed compilation just destroys its arena.
 *
 * Allocation failure is reported with mt_fail(MT_ERR_NOMEM, ...), so callers
 * never see NULL.
 */
#ifndef MT_SUPPORT_ARENA_H
#define MT_SUPPORT_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct mt_arena mt_arena;

mt_arena *mt_arena_create(void);            /* NULL when out of memory */
void mt_arena_destroy(mt_arena *a);         /* NULL is a no-op */
void *mt_arena_alloc(mt_arena *a, size_t size);  /* zero-filled, 16-aligned */
char *mt_arena_strdup(mt_arena *a, const char *s);
char *mt_arena_strndup(mt_arena *a, const char *s, size_t n);
char *mt_arena_printf(mt_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *mt_arena_vprintf(mt_arena *a, const char *fmt, va_list ap);
size_t mt_arena_bytes(const mt_arena *a);   /* bytes handed out so far */
/* Frees the chunks this thread keeps from destroyed arenas for the next
 * ones (arena.c), so that the next arena mallocs each of its chunks (tests
 * that make a chunk's malloc fail). */
void mt_arena_release_kept(void);

#define MT_NEW(arena, T) ((T *)mt_arena_alloc((arena), sizeof(T)))
#define MT_NEW_ARRAY(arena, T, n) ((T *)mt_arena_alloc((arena), sizeof(T) * (size_t)(n)))

/* Growable array in an arena: `MT_VEC(int) v = {0}; MT_VEC_PUSH(a, &v, 3);`.
 * Growth copies into a new arena block (the old one is wasted, at most 2x). */
#define MT_VEC(T) struct { T *data; int len, cap; }
void mt_vec_grow_(mt_arena *a, void **data, int *cap, size_t elem);
#define MT_VEC_PUSH(arena, v, item)                                              \
    do {                                                                         \
        if ((v)->len == (v)->cap)                                                \
            mt_vec_grow_((arena), (void **)&(v)->data, &(v)->cap, sizeof(*(v)->data)); \
        (v)->data[(v)->len++] = (item);                                          \
    } while (0)

#endif
