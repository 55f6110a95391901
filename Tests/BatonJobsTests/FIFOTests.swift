import BatonInternals
import BatonTestSupport
import Testing

@testable import BatonJobs

/// The ready FIFO, a ring buffer, against an array: random pushes and pops that wrap around
/// the ring and grow it while its head is mid-buffer give the same elements in the same order,
/// and every element is released once popped or once the FIFO goes.
@Suite struct FIFOTests {
    final class Element {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test(arguments: 0..<8)
    func matchesAnArrayThroughWrapsAndGrowth(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        var weak = WeakBox<Element>()
        var popped: [Int] = []
        var expected: [Int] = []
        var model: [Int] = []
        do {
            var fifo = FIFO<Element>()
            var next = 0
            for _ in 0..<20_000 {
                // Biased to push while small, so that the ring fills, wraps and grows.
                let push = model.isEmpty || Int.random(in: 0..<100, using: &random) < (model.count < 200 ? 60 : 45)
                if push {
                    let element = Element(next)
                    weak.add(element)
                    fifo.append(element)
                    model.append(next)
                    next += 1
                } else {
                    popped.append(fifo.popFirst()!.number)
                    expected.append(model.removeFirst())
                }
                #expect(fifo.isEmpty == model.isEmpty)
            }
            while let element = fifo.popFirst() { popped.append(element.number) }
            expected += model
            #expect(fifo.popFirst() == nil)
            // Some left in a FIFO that is dropped: released with it.
            for number in 0..<37 {
                let element = Element(-number)
                weak.add(element)
                fifo.append(element)
            }
            _ = fifo.popFirst()
        }
        #expect(popped == expected)
        #expect(weak.alive == 0)
    }
}

/// Weak references to count the objects still alive.
struct WeakBox<Object: AnyObject> {
    private struct Ref { weak var object: Object? }
    private var refs: [Ref] = []
    mutating func add(_ object: Object) { refs.append(Ref(object: object)) }
    var alive: Int { refs.count { $0.object != nil } }
}
