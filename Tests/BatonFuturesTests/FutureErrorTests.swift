import BatonFutures
import Testing

/// `FutureError` as callers use it: compared whole or by code, its details read, described.
@Suite("FutureError")
struct FutureErrorTests {
    @Test("errors are equal when code and details are equal")
    func equality() {
        #expect(FutureError.timedOut(after: .seconds(3)) == .timedOut(after: .seconds(3)))
        #expect(FutureError.timedOut(after: .seconds(3)) != .timedOut(after: .seconds(4)))
        #expect(FutureError.timedOut(after: .seconds(3)) != .noFutures)
        #expect(FutureError.noFutures == .noFutures)
        #expect(FutureError.adoptionCycle != .noFutures)
        let errors: Set<FutureError> = [.noFutures, .noFutures, .timedOut(after: .seconds(1)), .adoptionCycle]
        #expect(errors.count == 3)
    }

    @Test("the code and the payload are readable")
    func codeAndPayload() {
        let timedOut = FutureError.timedOut(after: .milliseconds(250))
        #expect(timedOut.code == .timedOut)
        #expect(timedOut.code != .noFutures)
        #expect(timedOut.duration == .milliseconds(250))
        #expect(FutureError.noFutures.code == .noFutures)
        #expect(FutureError.noFutures.duration == nil)
        #expect(FutureError.adoptionCycle.code == .adoptionCycle)
        #expect(FutureError.adoptionCycle.duration == nil)
        #expect(FutureError.Code.timedOut.description == "timedOut")
        #expect(FutureError.Code.adoptionCycle.description == "adoptionCycle")
    }

    @Test("a switch on the code needs only the codes it handles and a default")
    func switchOnCode() {
        func kind(_ error: FutureError) -> String {
            switch error.code {
            case .timedOut: "slow"
            case .noFutures: "empty"
            default: "other"
            }
        }
        #expect(kind(.timedOut(after: .seconds(1))) == "slow")
        #expect(kind(.noFutures) == "empty")
        #expect(kind(.adoptionCycle) == "other")
    }

    @Test("descriptions say what happened and what to do")
    func descriptions() {
        let timedOut = FutureError.timedOut(after: .seconds(3)).description
        #expect(timedOut.contains("did not complete within 3.0 seconds"))
        #expect(timedOut.contains("allow more time"))
        let empty = FutureError.noFutures.description
        #expect(empty.contains("no futures"))
        #expect(empty.contains("check that the array is not empty"))
        let cycle = FutureError.adoptionCycle.description
        #expect(cycle.contains("its own future"))
        #expect(cycle.contains("does not depend on it"))
    }

    @Test("the machinery's errors match the static members", .timeLimit(.minutes(1)))
    func thrownErrorsMatch() async {
        let error = await Future<Int>.race([]).expectError()
        #expect((error as? FutureError)?.code == .noFutures)
        #expect(error as? FutureError == .noFutures)
    }
}
