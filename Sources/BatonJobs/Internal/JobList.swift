/// A list of jobs, in the order appended, in one word.
///
/// Most jobs have one dependency and one dependent or none (a chain, a pipeline stage): one job
/// is held directly, and an array is made only for a second. That saves an allocation and a
/// free per edge on that path, and keeps ``JobStateMachine`` small. Read it by index or with
/// ``forEach(_:)``: iterating a copy would retain and release its storage on every pass.
struct JobList {
    private enum Storage {
        case empty
        case one(Job)
        case many([Job])
    }

    private var storage = Storage.empty

    init() {}

    var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let jobs): jobs.count
        }
    }

    subscript(index: Int) -> Job {
        switch storage {
        case .empty: preconditionFailure("JobList index \(index) out of range")
        case .one(let job):
            precondition(index == 0, "JobList index \(index) out of range")
            return job
        case .many(let jobs): return jobs[index]
        }
    }

    mutating func append(_ job: consuming Job) {
        var taken = Storage.empty
        swap(&taken, &storage)  // moved out, so that the array below is not shared
        switch consume taken {
        case .empty:
            storage = .one(job)
        case .one(let first):
            storage = .many([first, job])
        case .many(var jobs):
            jobs.append(job)
            storage = .many(jobs)
        }
    }

    /// Calls `body` with each job, in order, without copying the list.
    func forEach(_ body: (Job) -> Void) {
        switch storage {
        case .empty: return
        case .one(let job): body(job)
        case .many(let jobs): for index in jobs.indices { body(jobs[index]) }
        }
    }

    /// How many jobs `predicate` picks.
    func count(where predicate: (Job) -> Bool) -> Int {
        var picked = 0
        forEach { if predicate($0) { picked += 1 } }
        return picked
    }

    /// Removes every job that `shouldRemove` picks; the others keep their order.
    mutating func removeAll(where shouldRemove: (Job) -> Bool) {
        var kept = JobList()
        forEach { if !shouldRemove($0) { kept.append($0) } }
        self = kept
    }

    /// Empties the list and returns its jobs, in order: the first, and the array of the rest.
    /// Moved out, not copied, so nothing is retained.
    mutating func takeAll() -> (first: Job?, rest: [Job]) {
        var taken = Storage.empty
        swap(&taken, &storage)
        switch consume taken {
        case .empty: return (nil, [])
        case .one(let job): return (job, [])
        case .many(let jobs): return (nil, jobs)
        }
    }

    /// The jobs as an array, in order.
    var array: [Job] {
        switch storage {
        case .empty: []
        case .one(let job): [job]
        case .many(let jobs): jobs
        }
    }
}
