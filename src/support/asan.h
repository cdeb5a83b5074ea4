/*
 * asan.h -- memory the library keeps but does not lend out (the context's
 * pool, the kept arena chunks, a run's arena between values) is poisoned
 * when built with AddressSanitizer (MT_SANITIZE), so that a stale pointer
 * into it is reported; MT_POISON and MT_UNPOISON are no-ops otherwise.
 * MT_ASAN is defined under AddressSanitizer (gcc's __SANITIZE_ADDRESS__,
 * clang's __has_feature).
 */
#ifndef MT_SUPPORT_ASAN_H
#define MT_SUPPORT_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define MT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_ASAN 1
#endif
#endif

#ifdef MT_ASAN
#include <sanitizer/asan_interface.h>
#define MT_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MT_POISON(p, n) ((void)(p), (void)(n))
#define MT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#endif
