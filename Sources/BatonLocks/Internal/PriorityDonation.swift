/// Raises `task` to `priority` if it runs below it, where the runtime can (see
/// `escalate(_:to:)`), and returns the task's priority afterwards: what it was, or `priority`.
///
/// The caller must know the task to be alive: ``AsyncLock`` and ``AsyncLazy`` call it under
/// their mutex, for the task that holds the lock or runs the initializer.
func donate(_ priority: TaskPriority, to task: UnsafeCurrentTask) -> TaskPriority {
    let current = task.priority
    guard current < priority else { return current }
    escalate(task, to: priority)
    return priority
}

/// Raises `task`'s priority to at least `priority`, where the runtime can (Swift 6.2's
/// `UnsafeCurrentTask.escalatePriority(to:)`); on older Apple releases, and with a compiler
/// older than 6.2, it does nothing.
func escalate(_ task: UnsafeCurrentTask, to priority: TaskPriority) {
    #if compiler(>=6.2)
    if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
        task.escalatePriority(to: priority)
    }
    #endif
}
