/*
 * names.c -- the names of statuses, dtypes and stages, and the version: the
 * public lookup functions, kept in the lowest layer because every layer
 * prints dtypes.
 */
#include <stdio.h>
#include "support/common.h"
#include <string.h>

#include "minitriton.h"

const char *mt_status_str(mt_status st) {
    static const char *names[] = {
#define MT_X_(name, text) text,
        MT_STATUS_LIST(MT_X_)
#undef MT_X_
    };
    return (unsigned)st < MT_STATUS_COUNT_ ? names[st] : "unknown status";
}

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
#define MT_X_(name, text, size) {text, size},
    MT_DTYPE_LIST(MT_X_)
#undef MT_X_
};

const char *mt_dtype_str(mt_dtype dt) {
    return (unsigned)dt < MT_DTYPE_COUNT_ ? dtypes[dt].name : "unknown";
}

size_t mt_dtype_size(mt_dtype dt) { return (unsigned)dt < MT_DTYPE_COUNT_ ? dtypes[dt].size : 0; }

int mt_dtype_from_str(const char *name, mt_dtype *out) {
    if (!name) return -1;
    for (int i = 0; i < MT_DTYPE_COUNT_; i++)
        if (strcmp(dtypes[i].name, name) == 0) {
            if (out) *out = (mt_dtype)i;
            return 0;
        }
    return -1;
}

static const char *const stage_names[] = {
#define MT_X_(name, text) text,
    MT_STAGE_LIST(MT_X_)
#undef MT_X_
};

const char *mt_stage_str(mt_stage st) {
    return (unsigned)st < MT_STAGE_COUNT_ ? stage_names[st] : "unknown";
}

int mt_stage_from_str(const char *name, mt_stage *out) {
    if (!name) return -1;
    for (int i = 0; i < MT_STAGE_COUNT_; i++)
        if (strcmp(stage_names[i], name) == 0) {
            if (out) *out = (mt_stage)i;
            return 0;
        }
    return -1;
}

const char *mt_version(void) { return MT_VERSION_STRING; }


const char *mt_device_name(mt_device d, char *buf, int cap) {
    switch (d.type) {
    case 0: snprintf(buf, (size_t)cap, "default"); break;
    case MT_DEVICE_CPU:
        if (d.id) snprintf(buf, (size_t)cap, "cpu:%d", (int)d.id);
        else snprintf(buf, (size_t)cap, "cpu");
        break;
    case MT_DEVICE_CUDA: snprintf(buf, (size_t)cap, "cuda:%d", (int)d.id); break;
    case MT_DEVICE_TEST: snprintf(buf, (size_t)cap, "test:%d", (int)d.id); break;
    default: snprintf(buf, (size_t)cap, "device%d:%d", (int)d.type, (int)d.id); break;
    }
    return buf;
}
