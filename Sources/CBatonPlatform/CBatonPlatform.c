#define _GNU_SOURCE
#include "CBatonPlatform.h"

uint32_t baton_lock_diagnostics_word = BATON_LOCK_DIAGNOSTICS_UNSET;
uint32_t baton_lock_diagnostics_used_word = 0;
_Thread_local uintptr_t baton_thread_stripe_word = 0;

#if defined(__linux__)
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int baton_futex_wait(uint32_t *address, uint32_t expected) {
    return (int)syscall(SYS_futex, address, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

int baton_futex_wait_timeout(uint32_t *address, uint32_t expected, int64_t nanoseconds) {
    // Callers pass a positive time (they do not wait once their deadline has passed); a negative
    // one is not made zero here but refused by the kernel (EINVAL), and this returns 0 at once.
    struct timespec timeout = {
        .tv_sec = (time_t)(nanoseconds / 1000000000),
        .tv_nsec = (long)(nanoseconds % 1000000000),
    };
    long result = syscall(SYS_futex, address, FUTEX_WAIT_PRIVATE, expected, &timeout, NULL, 0);
    return result == -1 && errno == ETIMEDOUT ? 1 : 0;
}

int baton_futex_wake(uint32_t *address, int count) {
    long woken = syscall(SYS_futex, address, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    return woken < 0 ? 0 : (int)woken;
}
#endif

#if defined(__linux__)
#include <sched.h>

int baton_affinity_processor_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    return CPU_COUNT(&set);
}
#endif
