#ifndef C_BATON_PLATFORM_H
#define C_BATON_PLATFORM_H

#include <stdint.h>

/// A hint to the CPU that the caller is in a spin-wait loop.
static inline void baton_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#if defined(__linux__)
/// Blocks while `*address == expected` (FUTEX_WAIT_PRIVATE). Returns 0 when woken, -1 with errno
/// otherwise (EAGAIN when the value had already changed, EINTR on a signal); callers re-check
/// their state word either way.
int baton_futex_wait(uint32_t *address, uint32_t expected);

/// Wakes up to `count` threads blocked in `baton_futex_wait` on `address` (FUTEX_WAKE_PRIVATE).
/// Returns the number of threads woken.
int baton_futex_wake(uint32_t *address, int count);
#endif

#endif
