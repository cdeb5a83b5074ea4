/*
 * fault_guard.h -- runs a function and reports whether it faulted, for the
 * tests of memory the host must not touch (the test device's addresses).
 *
 * A SIGSEGV (or SIGBUS) handler jumps back out with siglongjmp; the
 * previous handlers are restored afterwards, so AddressSanitizer's own
 * handler (which lets a user handler take over: allow_user_segv_handler)
 * is back for the rest of the test. The guarded function must hold no lock
 * and no allocation when it faults: it is abandoned where it stands. Under
 * valgrind each deliberate fault is also reported as an "Invalid read" (or
 * write) in a `memfd:mt-test-device` segment: expected, and the only errors
 * these tests show there.
 */
#ifndef MT_TEST_FAULT_GUARD_H
#define MT_TEST_FAULT_GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>

static sigjmp_buf fault_jmp;

static void fault_jump(int sig) {
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

/* fn(arg); true when it faulted. */
__attribute__((unused)) static bool faults(void (*fn)(void *), void *arg) {
    struct sigaction sa, old_segv, old_bus;
    sa.sa_handler = fault_jump;
    sa.sa_flags = SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
    volatile bool faulted = false;
    if (sigsetjmp(fault_jmp, 1) == 0) fn(arg);
    else faulted = true;
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    return faulted;
}

#endif
