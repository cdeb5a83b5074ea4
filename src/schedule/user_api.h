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
};

#endif
