/*
 * device.c -- what every device kind shares (see device.h): device names,
 * the module table of kinds that run host code, and the fixed device list
 * a run can look devices up in.
 *
 * A host "module" is what the JIT already did: the functions are linked and
 * their addresses known, so loading one copies the name -> address table
 * (names included: the image may be a caller's temporary) into one heap
 * block, and resolving a name is a linear search (a module holds the few
 * kernels of one compiled program; it is done once per kernel at load time,
 * never per launch).
 */
#include "runtime/device.h"

#include "support/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mt_dev_module {
    int n;          /* functions */
    const char **names;
    void **addrs;
};

const char *mt_device_str(mt_device d, char *buf, size_t cap) {
    if (cap == 0) return buf;
    return mt_device_name(mt_device_norm(d), buf, cap > 64 ? 64 : (int)cap);
}

mt_status mt_dev_host_load(mt_dev *d, const mt_dev_image *img, mt_dev_module **out, mt_dev_err *e) {
    *out = NULL;
    if (img->format != MT_IMAGE_HOST)
        return mt_dev_fail(e, MT_ERR_UNSUPPORTED, "the %s device runs host code only, not %s",
                           d->ops->kind, img->format == MT_IMAGE_PTX ? "PTX" : "a cubin");
    size_t n = img->nsymbols > 0 ? (size_t)img->nsymbols : 0, text = 0;
    for (size_t i = 0; i < n; i++) text += strlen(img->names[i]) + 1;
    mt_dev_module *m = malloc(sizeof *m + n * (sizeof(char *) + sizeof(void *)) + text);
    if (!m) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory loading a module");
    m->n = (int)n;
    m->addrs = (void **)(m + 1);
    m->names = (const char **)(m->addrs + n);
    char *s = (char *)(m->names + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(img->names[i]) + 1;
        memcpy(s, img->names[i], len);
        m->names[i] = s;
        m->addrs[i] = img->addrs[i];
        s += len;
    }
    *out = m;
    return MT_OK;
}

mt_status mt_dev_host_function(mt_dev *d, mt_dev_module *m, const char *name, void **fn,
                               mt_dev_err *e) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0) {
            *fn = m->addrs[i];
            return MT_OK;
        }
    *fn = NULL;
    return mt_dev_fail(e, MT_ERR_INVALID_ARG, "the module has no function '%s'", name);
}

void mt_dev_host_unload(mt_dev *d, mt_dev_module *m) { free(m); }

mt_status mt_dev_list_find(void *ctx, mt_device where, mt_dev **out, mt_dev_err *e) {
    const mt_dev_list *l = ctx;
    for (int i = 0; l && i < l->n; i++)
        if (mt_device_eq(l->devs[i]->where, where)) {
            *out = l->devs[i];
            return MT_OK;
        }
    char name[32];
    *out = NULL;
    return mt_dev_fail(e, MT_ERR_UNAVAILABLE, "no device %s here",
                       mt_device_str(where, name, sizeof name));
}
