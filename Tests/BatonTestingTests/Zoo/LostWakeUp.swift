import BatonLocks
import BatonTesting
import Dispatch

/// A semaphore of one permit: `acquire` waits for the permit, `release` hands it on.
protocol OnePermitSemaphore: Sendable {
    func acquire()
    func release()
}

/// Lost wake-up: a waiter that finds no permit makes a semaphore to park on and registers it
/// in a second critical section. A `release` between the two finds no waiter and puts the
/// permit back; the waiter then parks and no one wakes it.
final class HandRolledSemaphore: OnePermitSemaphore, @unchecked Sendable {  // `lock` guards `permits` and `waiters`
    private let lock = Lock()
    private var permits = 1
    private var waiters: [DispatchSemaphore] = []

    func acquire() {
        let taken = lock.withLock {
            guard permits > 0 else { return false }
            permits -= 1
            return true
        }
        if taken { return }
        let wakeUp = DispatchSemaphore(value: 0)  // made outside the lock, to keep the section short
        lock.withLock { waiters.append(wakeUp) }
        wakeUp.wait()
    }

    func release() {
        let next: DispatchSemaphore? = lock.withLock {
            if waiters.isEmpty {
                permits += 1
                return nil
            }
            return waiters.removeFirst()
        }
        next?.signal()
    }
}

/// The same semaphore with the check and the registration in one critical section: a release
/// either finds the permit taken by no one or the waiter registered.
final class RegisteringSemaphore: OnePermitSemaphore, @unchecked Sendable {  // `lock` guards `permits` and `waiters`
    private let lock = Lock()
    private var permits = 1
    private var waiters: [DispatchSemaphore] = []

    func acquire() {
        let wakeUp: DispatchSemaphore? = lock.withLock {
            if permits > 0 {
                permits -= 1
                return nil
            }
            let wakeUp = DispatchSemaphore(value: 0)
            waiters.append(wakeUp)
            return wakeUp
        }
        wakeUp?.wait()
    }

    func release() {
        let next: DispatchSemaphore? = lock.withLock {
            if waiters.isEmpty {
                permits += 1
                return nil
            }
            return waiters.removeFirst()
        }
        next?.signal()
    }
}

/// A counter guarded by a one-permit semaphore: every operation runs while holding the permit.
final class PermitCounter<Semaphore: OnePermitSemaphore>: @unchecked Sendable {  // `semaphore`'s permit guards `count`
    private let semaphore: Semaphore
    private var count = 0

    init(_ semaphore: Semaphore) { self.semaphore = semaphore }

    private func withPermit<R>(_ body: () -> R) -> R {
        semaphore.acquire()
        defer { semaphore.release() }
        return body()
    }

    func increment() { withPermit { count += 1 } }

    var value: Int { withPermit { count } }
}

extension Zoo {
    static func permitCounterCheck<Semaphore: OnePermitSemaphore>(_ make: @escaping () -> Semaphore)
        -> LinearizabilityCheck<PermitCounter<Semaphore>, CounterSpec.Operation, Int?>
    {
        // One operation per thread: a thread that slept through a release is woken by the next
        // one, so the hang shows only when the lost release was the other thread's last.
        LinearizabilityCheck(
            model: CounterSpec(), operationsPerThread: 1, operations: [.increment, .read],
            make: { PermitCounter(make()) }
        ) { counter, operation in
            switch operation {
            case .increment:
                counter.increment()
                return nil
            case .read:
                return counter.value
            }
        }
    }

    /// A hang waits for the budget's time to run out: one second keeps the suite quick. No
    /// round limit, so that the rounds go on for the whole second until one hangs.
    static let hangBudget = CheckBudget(rounds: nil, time: .seconds(1))

    static var handRolledSemaphore: Exhibit {
        Exhibit(
            type: "HandRolledSemaphore", bug: "lost wake-up", expected: .hung, budget: hangBudget
        ) { budget in
            try permitCounterCheck { HandRolledSemaphore() }.run(budget: budget)
        }
    }

    static var registeringSemaphore: Exhibit {
        Exhibit(type: "RegisteringSemaphore", bug: nil) { budget in
            try permitCounterCheck { RegisteringSemaphore() }.run(budget: budget)
        }
    }
}
