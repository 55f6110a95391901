@_exported import BatonLocks

#if Macros
/// Makes a final class thread-safe: every stored `var` is read and written only under the
/// instance's lock, composed operations run in one critical section with `withLock { }`, and
/// the class conforms to `Sendable`, checked by the compiler.
///
/// ```swift
/// import BatonMacros
///
/// @Synchronized
/// final class Warrior {
///     var leftHand: String?
///     var rightHand: String?
///     private(set) var swaps = 0
///     let name: String
///
///     init(name: String) { self.name = name }
///
///     func swapHands() {
///         withLock {                      // one critical section
///             (leftHand, rightHand) = (rightHand, leftHand)
///             swaps += 1
///         }
///     }
/// }
/// ```
///
/// What it does to the class:
/// - Each stored `var` gets a getter that takes the lock's shared side (reads on several
///   threads run in parallel), a setter that takes its exclusive side, and an in-place accessor
///   that holds the exclusive side for the whole mutation, so `warrior.swaps += 1` and `log.append(x)` are each
///   one atomic read-modify-write. Its value lives in private storage that nothing else
///   reaches. Default values, assignment in `init`, the implicit `nil` of an optional, `weak`
///   and `unowned` keep working.
/// - `let`, computed, `static` and `nonisolated(unsafe)` properties are left as they are.
/// - `withLock(_:)` runs a composed operation as one critical section and returns its result;
///   it rethrows with the body's typed error. Inside it, use the class's properties and methods
///   as usual: the lock is a `RecursiveReadWriteLock`, whose exclusive holder may take it again, so
///   a nested `withLock` or a property access runs inside the section instead of deadlocking.
/// - In the class's own methods, a `withLock { }` section reaches the properties it names
///   directly: `@SynchronizedMethod` rewrites the method's body so that `swaps += 1` inside the
///   section is a plain update of the storage, not a second trip through the lock. A composed
///   operation then costs one lock, as on a `Protected` value. What could run after the section
///   keeps the accessors: a closure or a local function inside it, another instance's
///   properties, key paths, and any property whose name the method also binds (a parameter or
///   a local of that name). Lock diagnostics still name the line where the section starts. The
///   rewritten body is the one the compiler checks, so an error in such a method is reported in
///   its expansion, with a note that points back at the line.
/// - The lock is named after the class, so `LockDiagnostics` reports and
///   `LockDiagnostics.statistics()` say `Warrior`.
/// - The class conforms to `Sendable`. A property whose type is not `Sendable` is a compile
///   error at that property.
///
/// These are compile errors, each with a message that says what to do instead: the attribute
/// on a struct, enum, actor or a class that is not `final` (with a fix-it that adds `final`),
/// and on a class with a `lazy var`, a stored property with `willSet`/`didSet`, a property
/// wrapper, or several properties in one declaration.
///
/// Thread safety: every property and `withLock` may be used from any thread.
///
/// - Warning: A value read from a property is a copy taken under the lock; a check on it and
///   a later write are two critical sections. Do both inside one `withLock`. Do not call out to
///   code that may block on another thread needing this instance while in `withLock`.
@attached(member, names: named(_batonLock), named(withLock))
@attached(memberAttribute)
@attached(extension, conformances: Sendable)
public macro Synchronized() = #externalMacro(module: "BatonMacrosPlugin", type: "SynchronizedMacro")

/// Added by ``Synchronized()`` to each stored `var` it protects; not to be written by hand.
/// The property gets accessors that take the instance's lock, and private storage beside it.
@attached(accessor, names: named(init), named(get), named(set), named(_modify))
@attached(peer, names: prefixed(_))
public macro SynchronizedProperty() = #externalMacro(module: "BatonMacrosPlugin", type: "SynchronizedPropertyMacro")

/// Added by ``Synchronized()`` to each method whose `withLock` sections use the class's
/// synchronized properties, naming them; not to be written by hand. Inside those sections, which
/// already hold the lock, the uses read and write the properties' storage directly instead of
/// taking the lock again through their accessors.
@attached(body)
public macro SynchronizedMethod(_ properties: String...) =
    #externalMacro(module: "BatonMacrosPlugin", type: "SynchronizedMethodMacro")
#else
#warning(
    "BatonMacros is built without Baton's Macros trait, so @Synchronized is not available: .package(url: …, from: …, traits: [\"Macros\"])"
)
#endif
