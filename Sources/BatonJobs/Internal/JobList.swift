/// A list of jobs, in the order appended, that keeps its first job inline.
///
/// Most jobs have one dependency and one dependent or none (a chain, a pipeline stage); keeping
/// the first one out of an array saves an allocation and a free per edge on that path. Read it
/// by index: iterating a copy would retain and release its storage on every pass.
struct JobList {
    /// The first job; nil only when the list is empty.
    private var head: Job?
    /// The jobs after the first.
    private var tail: [Job] = []

    init() {}

    var isEmpty: Bool { head == nil }

    var count: Int { head == nil ? 0 : 1 + tail.count }

    subscript(index: Int) -> Job {
        index == 0 ? head! : tail[index - 1]
    }

    mutating func append(_ job: Job) {
        if head == nil {
            head = job
        } else {
            tail.append(job)
        }
    }

    /// Calls `body` with each job, in order, without copying the list.
    func forEach(_ body: (Job) -> Void) {
        guard let head else { return }
        body(head)
        for index in tail.indices { body(tail[index]) }
    }

    /// How many jobs `predicate` picks.
    func count(where predicate: (Job) -> Bool) -> Int {
        var picked = 0
        for index in 0..<count where predicate(self[index]) { picked += 1 }
        return picked
    }

    /// Removes every job that `shouldRemove` picks; the others keep their order.
    mutating func removeAll(where shouldRemove: (Job) -> Bool) {
        var kept = JobList()
        for index in 0..<count where !shouldRemove(self[index]) { kept.append(self[index]) }
        self = kept
    }

    /// Empties the list and returns its jobs, in order: the first, and the array of the rest.
    /// Moved out, not copied, so nothing is retained.
    mutating func takeAll() -> (first: Job?, rest: [Job]) {
        var rest: [Job] = []
        swap(&rest, &tail)
        return (head.take(), rest)
    }

    /// The jobs as an array, in order.
    var array: [Job] {
        guard let head else { return [] }
        return [head] + tail
    }
}
