/*
 * target.c -- target descriptions (target.h).
 *
 * The CPU's vector width comes from its LLVM feature string: "+avx512f"
 * gives 64-byte registers (32 of them), "+avx" or "+avx2" 32 bytes (16),
 * "+neon" 16 bytes (32), anything else SSE's 16 bytes (16). Cache sizes
 * come from sysconf where the C library reports them, else the default
 * target's. The CUDA facts are the architecture's documented limits
 * (CUDA C Programming Guide, "Technical Specifications per Compute
 * Capability"); the SM count is that of the architecture's usual data-centre
 * or top consumer part, a hint for grid sizing only: a run reads the real
 * count from the device.
 */
#include "target/target.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const mt_target_desc default_cpu = {
    .kind = MT_TARGET_CPU,
    .cpu = "generic-avx512",
    .vector_bytes = 64,
    .vector_registers = 32,
    .cache_line_bytes = 64,
    .cores = 2,
    .l1d_bytes = 48 << 10,
    .l2_bytes = 1 << 20,
    .l3_bytes = 32 << 20,
};

const mt_target_desc *mt_target_default_cpu(void) { return &default_cpu; }

bool mt_target_has_feature(const char *features, const char *name) {
    size_t n = strlen(name);
    for (const char *p = features; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n + 1 && p[0] == '+' && strncmp(p + 1, name, n) == 0) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

static int64_t cache_size(int name, int64_t fallback) {
#ifdef _SC_LEVEL1_DCACHE_SIZE
    long v = sysconf(name);
    if (v > 0) return v;
#else
    (void)name;
#endif
    return fallback;
}

void mt_target_host_cpu(mt_target_desc *t, const char *cpu, const char *features, int cores) {
    memset(t, 0, sizeof *t);
    t->kind = MT_TARGET_CPU;
    snprintf(t->cpu, sizeof t->cpu, "%s", cpu && *cpu ? cpu : "generic");
    if (mt_target_has_feature(features, "avx512f")) {
        t->vector_bytes = 64, t->vector_registers = 32;
    } else if (mt_target_has_feature(features, "avx2") || mt_target_has_feature(features, "avx")) {
        t->vector_bytes = 32, t->vector_registers = 16;
    } else if (mt_target_has_feature(features, "neon")) {
        t->vector_bytes = 16, t->vector_registers = 32;
    } else {
        t->vector_bytes = 16, t->vector_registers = 16;
    }
    t->cache_line_bytes = 64;
    t->cores = cores > 0 ? cores : 1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    t->l1d_bytes = cache_size(_SC_LEVEL1_DCACHE_SIZE, default_cpu.l1d_bytes);
    t->l2_bytes = cache_size(_SC_LEVEL2_CACHE_SIZE, default_cpu.l2_bytes);
    t->l3_bytes = cache_size(_SC_LEVEL3_CACHE_SIZE, 0);
#else
    t->l1d_bytes = default_cpu.l1d_bytes;
    t->l2_bytes = default_cpu.l2_bytes;
    t->l3_bytes = 0;
    (void)cache_size;
#endif
}

/* ---- cuda -------------------------------------------------------------------- */

static const struct cuda_arch {
    const char *name;
    int sm, max_shared, sms;
} cuda_archs[] = {
    {"sm_80", 80, 163 << 10, 108}, /* A100 */
    {"sm_86", 86, 99 << 10, 82},   /* RTX 3090, A40 */
    {"sm_89", 89, 99 << 10, 128},  /* RTX 4090, L40 */
    {"sm_90", 90, 227 << 10, 132}, /* H100 SXM */
};

bool mt_target_cuda(mt_target_desc *t, const char *arch) {
    if (!arch) arch = "sm_90";
    for (size_t i = 0; i < sizeof cuda_archs / sizeof cuda_archs[0]; i++) {
        const struct cuda_arch *c = &cuda_archs[i];
        if (strcmp(arch, c->name) != 0) continue;
        memset(t, 0, sizeof *t);
        t->kind = MT_TARGET_CUDA;
        t->sm = c->sm;
        t->warp_size = 32;
        t->max_threads_per_block = 1024;
        t->max_shared_per_block = c->max_shared;
        t->max_regs_per_block = 65536;
        t->max_regs_per_thread = 255;
        t->vector_bytes = 16; /* a thread's widest load or store (ld.global.v4.f32) */
        t->num_sms = c->sms;
        t->mma_m = t->mma_n = t->mma_k = 16; /* every arch here has tensor cores (sm_70 on) */
        t->mma_bf16 = c->sm >= 80;           /* and takes bfloat16 on them (every arch here too) */
        return true;
    }
    return false;
}

const char *mt_target_cuda_archs(void) { return "sm_80, sm_86, sm_89, sm_90"; }

/* "48K", "1M", "3584K": bytes in the largest unit that divides them. */
static const char *size_text(int64_t n, char *buf, int cap) {
    if (n > 0 && n % (1 << 20) == 0) snprintf(buf, (size_t)cap, "%lldM", (long long)(n >> 20));
    else if (n > 0 && n % (1 << 10) == 0) snprintf(buf, (size_t)cap, "%lldK", (long long)(n >> 10));
    else snprintf(buf, (size_t)cap, "%lld", (long long)n);
    return buf;
}

char *mt_target_str(const mt_target_desc *t, char *buf, int cap) {
    char s1[24], s2[24], s3[24];
    if (t->kind == MT_TARGET_CUDA) {
        if (t->mma_m) snprintf(s2, sizeof s2, " -mma=%dx%dx%d", t->mma_m, t->mma_n, t->mma_k);
        else s2[0] = 0;
        snprintf(buf, (size_t)cap,
                 "cuda -arch=sm_%d -warp=%d -max-threads=%d -max-shared=%s -regs=%d -sms=%d%s",
                 t->sm, t->warp_size, t->max_threads_per_block,
                 size_text(t->max_shared_per_block, s1, sizeof s1), t->max_regs_per_block,
                 t->num_sms, s2);
    } else {
        snprintf(buf, (size_t)cap, "cpu -mcpu=%s -vector-bytes=%d -cores=%d -l1d=%s -l2=%s -l3=%s%s",
                 t->cpu, t->vector_bytes, t->cores, size_text(t->l1d_bytes, s1, sizeof s1),
                 size_text(t->l2_bytes, s2, sizeof s2), size_text(t->l3_bytes, s3, sizeof s3),
                 t->test_device ? " -test-device" : "");
    }
    return buf;
}

int mt_target_step_bytes(const mt_target_desc *t) {
    return t->vector_bytes > t->cache_line_bytes ? t->vector_bytes : t->cache_line_bytes;
}

int mt_target_register_lanes(const mt_target_desc *t, mt_dtype dtype) {
    int n = t->vector_bytes / (int)mt_dtype_size(dtype);
    return n > 0 ? n : 1;
}

int mt_target_lanes(const mt_target_desc *t, mt_dtype dtype) {
    int n = mt_target_step_bytes(t) / (int)mt_dtype_size(dtype);
    return n > 0 ? n : 1;
}
