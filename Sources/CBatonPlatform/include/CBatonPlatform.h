#ifndef C_BATON_PLATFORM_H
#define C_BATON_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/// A hint to the CPU that the caller is in a spin-wait loop.
static inline void baton_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
/// The calling thread's thread pointer: non-zero and unique to the thread while it lives (on
/// x86_64 Linux, the value of `pthread_self()`), read with one instruction instead of a call.
/// A recursive lock reads it on every entry.
static inline uintptr_t baton_thread_pointer(void) {
    return (uintptr_t)__builtin_thread_pointer();
}
#endif

/// The calling thread's stripe number plus one, 0 until the thread is given one: a C
/// thread-local, read with one instruction where a pthread key costs a call (and a Swift global
/// holding the key a lazy-initialisation check). `ThreadStripe` in BatonCache owns it.
extern _Thread_local uintptr_t baton_thread_stripe_word;

static inline uintptr_t baton_thread_stripe(void) {
    return baton_thread_stripe_word;
}

static inline void baton_set_thread_stripe(uintptr_t value) {
    baton_thread_stripe_word = value;
}

/// Entry points of the Swift concurrency runtime, exported by it for compiled code and the
/// standard library (`withUnsafeCurrentTask`, `UnsafeCurrentTask.isCancelled` and
/// `Task.currentPriority` call them): the running task, `NULL` outside a task, whether a task
/// is cancelled, and its priority (a `TaskPriority` raw value in the low byte). `AsyncLock`
/// calls them directly: `withUnsafeCurrentTask` retains, copies and releases a handle around
/// its body, which cost several times the rest of the uncontended path, and each of
/// `Task.isCancelled` and `Task.currentPriority` looks the task up again. With no argument or
/// one pointer, and a pointer or an integer returned, the Swift calling convention they use
/// passes the values as the C one does.
extern void *swift_task_getCurrent(void);
extern _Bool swift_task_isCancelled(void *task);
extern size_t swift_task_currentPriority(void *task);

/// Which lock diagnostics are on: a bit set owned by `LockDiagnostics` in BatonLocks, 0 when
/// all are off. It starts as `BATON_LOCK_DIAGNOSTICS_UNSET` so that the first lock operation
/// installs the build's defaults. Every lock operation reads it, so it is a plain word behind
/// an inline relaxed load: the cost of diagnostics being off is one load and one branch.
extern uint32_t baton_lock_diagnostics_word;

/// Set once any lock operation has gone through the diagnostics, so that a lock's deinit knows
/// whether the lock-order graph may hold it.
extern uint32_t baton_lock_diagnostics_used_word;

#define BATON_LOCK_DIAGNOSTICS_UNSET 0x80000000u

static inline uint32_t baton_lock_diagnostics(void) {
    return __atomic_load_n(&baton_lock_diagnostics_word, __ATOMIC_RELAXED);
}

static inline uint32_t baton_lock_diagnostics_exchange(uint32_t value) {
    return __atomic_exchange_n(&baton_lock_diagnostics_word, value, __ATOMIC_SEQ_CST);
}

static inline _Bool baton_lock_diagnostics_compare_exchange(uint32_t expected, uint32_t value) {
    return __atomic_compare_exchange_n(
        &baton_lock_diagnostics_word, &expected, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static inline _Bool baton_lock_diagnostics_used(void) {
    return __atomic_load_n(&baton_lock_diagnostics_used_word, __ATOMIC_RELAXED) != 0;
}

static inline void baton_lock_diagnostics_mark_used(void) {
    if (!baton_lock_diagnostics_used()) {
        __atomic_store_n(&baton_lock_diagnostics_used_word, 1, __ATOMIC_RELAXED);
    }
}

#if defined(__linux__)
/// Blocks while `*address == expected` (FUTEX_WAIT_PRIVATE). Returns 0 when woken, -1 with errno
/// otherwise (EAGAIN when the value had already changed, EINTR on a signal); callers re-check
/// their state word either way.
int baton_futex_wait(uint32_t *address, uint32_t expected);

/// Blocks while `*address == expected`, for at most `nanoseconds` (FUTEX_WAIT_PRIVATE with a
/// relative timeout, which the kernel measures on CLOCK_MONOTONIC). Returns 1 if the time ran out
/// (ETIMEDOUT), 0 on any other return: woken, the value had already changed (EAGAIN), a signal
/// (EINTR), a spurious wake-up, or a negative time (EINVAL, at once: the caller works out the
/// time left from its deadline and does not wait when none is left). The kernel reports a timeout
/// only for a thread that no wake took: a thread that a `baton_futex_wake` picked returns 0, even
/// when its time ran out at the same moment.
int baton_futex_wait_timeout(uint32_t *address, uint32_t expected, int64_t nanoseconds);

/// Wakes up to `count` threads blocked in `baton_futex_wait` or `baton_futex_wait_timeout` on
/// `address` (FUTEX_WAKE_PRIVATE). Returns the number of threads woken.
int baton_futex_wake(uint32_t *address, int count);
#endif

#if defined(__linux__)
/// How many processors the calling thread's CPU affinity mask allows (`sched_getaffinity` and
/// `CPU_COUNT`, which need `_GNU_SOURCE` and so are out of Swift's reach); -1 if it cannot be
/// read.
int baton_affinity_processor_count(void);
#endif

#endif
