/*
 * user_api.h -- what the public mt_schedule handle is: a user schedule
 * (user_sched.h) on one kernel, during a compile callback.
 */
#ifndef MT_SCHEDULE_USER_API_H
#define MT_SCHEDULE_USER_API_H

#include "minitriton.h"
#include "schedule/user_sched.h"

struct mt_schedule {
    mt_usched u;
    bool broken;   /* an internal error stopped a primitive halfway: the compile fails */
    char msg[512]; /* that error's message (the arena may be what failed) */
};

#endif
