#if BATON_MODEL_CHECK && !canImport(Darwin)
import Atomics
import BatonInternals
@_spi(ModelChecking) import BatonLocks
import BatonTesting
import Dispatch

/// Each thread a check runs holds its ``ModelThread`` here.
let modelThreadSlot = ThreadSlot.objects()

/// What BatonLocks' seam asks at each step: it finds the calling thread's ``ModelThread`` and
/// hands the step to its execution.
final class Scheduler: ModelCheckScheduler {
    /// The process's one scheduler, installed in the seam.
    static let shared = ModelCheckSeam.install(Scheduler())

    func arrive(at word: UnsafeMutableRawPointer, _ operation: @autoclosure () -> String) -> Bool {
        guard let thread = ModelThread.scheduling(word) else { return false }
        thread.arrive(.atomic(word, operation()))
        return true
    }

    func note(_ result: String) {
        ModelThread.current?.note(result)
    }

    func futexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) -> Bool {
        guard let thread = ModelThread.scheduling(word) else { return false }
        thread.futexWait(word, expected)
        return true
    }

    func timedFutexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) -> Bool? {
        guard let thread = ModelThread.scheduling(word) else { return nil }
        return thread.timedFutexWait(word, expected)
    }

    func futexWake(_ word: UnsafeMutableRawPointer, _ count: Int32) -> Int32? {
        ModelThread.scheduling(word)?.futexWake(word, count)
    }

    var runsCurrentThread: Bool { ModelThread.current != nil }

    func substituteLock(for name: String) -> Lock? {
        ModelThread.current?.execution.substituteLocks[name]
    }
}

/// What a thread of a check is about to do when it waits for its turn.
enum ModelStep {
    /// Start its body.
    case start
    /// An atomic operation (or a marked write) on a watched word.
    case atomic(UnsafeMutableRawPointer, String)
    /// Park while the word holds `expected`; with `timed`, a wait whose time may run out.
    case futexWait(UnsafeMutableRawPointer, UInt32, timed: Bool)
    /// Wake up to `count` threads parked on the word.
    case futexWake(UnsafeMutableRawPointer, Int32)
    /// Return from a futex wait, woken.
    case resume
    /// Return from a timed futex wait, its time run out: the step a thread parked with a
    /// timeout may take at any point of the schedule.
    case timeOut
    /// A point the program marked (``ModelContext/pause(_:)``), where another thread may run.
    case pause(String)
}

/// One thread of one execution: a real thread that runs only when the scheduler hands it the
/// turn, and hands it back at its next step.
final class ModelThread: @unchecked Sendable {  // handed between threads through semaphores
    let index: Int
    /// Strong: the thread outlives the execution's end by a little (its thread-local slot is
    /// released when it exits). The execution breaks the cycle when it ends.
    let execution: ModelExecution
    /// Signalled by the scheduler to let this thread run its pending step.
    let turn = DispatchSemaphore(value: 0)
    var pending = ModelStep.start
    var finished = false
    /// The word this thread is parked on, while it is.
    var parkedOn: UnsafeMutableRawPointer?
    /// The value its word held when it parked.
    var parkedExpecting: UInt32 = 0
    /// Whether its wait has a timeout: then it stays runnable while parked, its next step being
    /// ``ModelStep/timeOut``.
    var parkedTimed = false
    /// Whether its last futex wait returned because its time ran out.
    var timedOut = false
    /// What its last futex wake returned.
    var woken: Int32 = 0

    init(index: Int, execution: ModelExecution) {
        self.index = index
        self.execution = execution
    }

    /// The calling thread's model thread, if it is one and the check watches `word`.
    static func scheduling(_ word: UnsafeMutableRawPointer) -> ModelThread? {
        guard let thread = current, thread.execution.watched[word] != nil
        else { return nil }
        return thread
    }

    /// The calling thread's model thread, if it is one and its body has not returned (what
    /// it does after, such as releasing the program's objects, is not scheduled).
    static var current: ModelThread? {
        guard let thread = modelThreadSlot.object(ModelThread.self)?.takeUnretainedValue(), !thread.finished
        else { return nil }
        return thread
    }

    /// Notes the result of the step just taken in the schedule.
    func note(_ result: String) {
        execution.schedule[execution.schedule.count - 1] += " = \(result)"
    }

    /// Announces the next step and waits until the scheduler lets this thread take it.
    func arrive(_ step: ModelStep) {
        pending = step
        execution.handBack.signal()
        turn.wait()
    }

    /// Announces that the body returned; the thread then exits.
    func finish() {
        finished = true
        execution.handBack.signal()
    }
}

/// One run of a program under one schedule.
final class ModelExecution: @unchecked Sendable {  // handed between threads through semaphores
    var threads: [ModelThread] = []
    /// The words whose operations are scheduled, with their names for the schedule.
    var watched: [UnsafeMutableRawPointer: String] = [:]
    /// Signalled by a model thread when it arrives at its next step (or finishes).
    let handBack = DispatchSemaphore(value: 0)
    /// The steps taken, for a failure's report.
    var schedule: [String] = []
    var violations: [String] = []
    /// The locks this execution's threads use in place of shared ones, by the shared ones' name
    /// (``ModelProgram/substituteLock(for:)``).
    var substituteLocks: [String: Lock] = [:]

    func name(of word: UnsafeMutableRawPointer) -> String {
        watched[word] ?? "word \(word)"
    }

    func record(_ thread: ModelThread, _ text: String) {
        schedule.append("\(schedule.count + 1). T\(thread.index) \(text)")
    }

    /// Starts the threads and waits until each waits at its start.
    func start(_ bodies: [@Sendable (ModelContext) -> Void], context: ModelContext) {
        threads = bodies.indices.map { ModelThread(index: $0, execution: self) }
        for (thread, body) in zip(threads, bodies) {
            runOnNewThread {
                modelThreadSlot.setObject(thread)
                thread.arrive(.start)
                body(context)
                thread.finish()
            }
        }
        for _ in threads { handBack.wait() }
    }

    /// Lets `thread` take its pending step and waits until it arrives at its next one.
    func grant(_ thread: ModelThread) {
        thread.turn.signal()
        handBack.wait()
    }

    /// The threads that can take a step: a thread parked with a timeout can, its time running
    /// out.
    var runnable: [Int] {
        threads.indices.filter { !threads[$0].finished && (threads[$0].parkedOn == nil || threads[$0].parkedTimed) }
    }

    /// Takes `thread`'s pending step.
    func take(_ thread: ModelThread) {
        switch thread.pending {
        case .start:
            record(thread, "starts")
            grant(thread)
        case .resume:
            record(thread, "returns from its futex wait, woken")
            grant(thread)
        case .timeOut:
            record(
                thread,
                "returns from its futexWait(\(name(of: thread.parkedOn!)), \(thread.parkedExpecting)): timed out")
            thread.parkedOn = nil
            thread.parkedTimed = false
            thread.timedOut = true
            parkOrder.removeAll { $0 == thread.index }
            grant(thread)
        case .pause(let name):
            record(thread, name)
            grant(thread)
        case .atomic(let word, let operation):
            record(thread, "\(name(of: word)).\(operation)")
            grant(thread)
        case .futexWait(let word, let expected, let timed):
            let value = word.assumingMemoryBound(to: UInt32.AtomicRepresentation.self)
            let current = UnsafeAtomic<UInt32>(at: value).load(ordering: .relaxed)
            let call =
                timed
                ? "futexWait(\(name(of: word)), \(expected), timeout)" : "futexWait(\(name(of: word)), \(expected))"
            thread.timedOut = false
            if current == expected {
                record(thread, "\(call): parks")
                thread.parkedOn = word
                thread.parkedExpecting = expected
                thread.parkedTimed = timed
                if timed { thread.pending = .timeOut }
                parkOrder.append(thread.index)
            } else {
                record(thread, "\(call): returns, the word is \(current)")
                grant(thread)
            }
        case .futexWake(let word, let count):
            var woken: Int32 = 0
            for index in parkOrder where woken < count && threads[index].parkedOn == word {
                threads[index].parkedOn = nil
                threads[index].parkedTimed = false
                threads[index].pending = .resume
                woken += 1
            }
            parkOrder.removeAll { threads[$0].parkedOn == nil }
            thread.woken = woken
            record(thread, "futexWake(\(name(of: word)), \(count)) = \(woken) woken")
            grant(thread)
        }
    }

    /// The parked threads, in the order they parked: a wake takes the longest parked first.
    var parkOrder: [Int] = []
}

/// The futex calls of a thread the checker runs, on a word it watches.
extension ModelThread {
    func futexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) {
        arrive(.futexWait(word, expected, timed: false))
    }

    /// A futex wait whose time may run out at any later step; returns whether it did.
    func timedFutexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) -> Bool {
        arrive(.futexWait(word, expected, timed: true))
        return timedOut
    }

    func futexWake(_ word: UnsafeMutableRawPointer, _ count: Int32) -> Int32 {
        arrive(.futexWake(word, count))
        return woken
    }
}
#endif
