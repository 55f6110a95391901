import BatonInternals
import Foundation
import Testing

/// `ThreadSlot`: each thread sees its own value, and a slot for objects lets go of a thread's
/// object when the thread exits (a slot for words never does).
@Suite(.timeLimit(.minutes(1))) struct ThreadSlotTests {
    static let words = ThreadSlot.words()
    static let objects = ThreadSlot.objects()

    final class Token {}

    /// A value shared by the test's threads, under a lock.
    final class Shared<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value { lock.withLock { stored } }
        func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
        /// What `body` reads of the value, under the lock. A copy taken out with ``value`` and read
        /// after the lock is released shares its storage with the next update, whose uniqueness
        /// check does not order it after that read: the thread sanitizer reports the pair.
        func read<Result>(_ body: (Value) -> Result) -> Result { lock.withLock { body(stored) } }
    }

    /// Runs `body` on a thread of its own and returns once the thread has exited, its
    /// thread-specific values destroyed (`pthread_join`). The bodies here never wait.
    static func onJoinedThread(_ body: @escaping @Sendable () -> Void) {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(created == 0, "pthread_create failed: \(created)")
        #if canImport(Darwin)
        pthread_join(thread!, nil)
        #else
        pthread_join(thread, nil)
        #endif
    }

    @Test func eachThreadSeesItsOwnWord() {
        #expect(Self.words.word == nil)
        let seen = Shared<[Int]>([])
        let started = Shared(0)
        for index in 1...8 {
            Thread {
                Self.words.setWord(UnsafeRawPointer(bitPattern: index))
                started.update { $0 += 1 }
                // Every thread has set its word before any reads it back.
                let deadline = Date().addingTimeInterval(30)
                while started.value < 8, Date() < deadline { usleep(500) }
                let mine = Int(bitPattern: Self.words.word)
                seen.update { $0.append(mine == index ? index : -index) }
            }.start()
        }
        let deadline = Date().addingTimeInterval(30)
        while seen.read(\.count) < 8, Date() < deadline { usleep(1000) }
        #expect(seen.value.sorted() == Array(1...8))
        #expect(Self.words.word == nil)  // this thread set none
    }

    @Test func anObjectSlotKeepsEachThreadsObjectUntilTheThreadExits() {
        final class Box: @unchecked Sendable { weak var token: Token? }
        let box = Box()
        let read = Shared<Bool?>(nil)
        Self.onJoinedThread {
            let token = Token()
            box.token = token
            Self.objects.setObject(token)
            let found = Self.objects.object(Token.self)?.takeUnretainedValue() === token
            read.update { $0 = found }
        }
        #expect(read.value == true)
        // The thread is gone, and with it the slot's retain: nothing else held the token.
        #expect(box.token == nil)
    }

    @Test func aWordSlotNeverReleasesWhatItHolds() {
        // A word slot holds a pointer it does not own: the thread's exit leaves the object alone.
        final class Box: @unchecked Sendable { weak var token: Token? }
        let box = Box()
        var token: Token? = Token()
        box.token = token
        let pointer = Int(bitPattern: Unmanaged.passUnretained(token!).toOpaque())
        Self.onJoinedThread { Self.words.setWord(UnsafeRawPointer(bitPattern: pointer)) }
        #expect(box.token != nil)
        #expect(isKnownUniquelyReferenced(&token))  // still ours alone, never released
        token = nil
        #expect(box.token == nil)
    }
}
