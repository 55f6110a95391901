import BatonLocks

extension Future {
    /// A future with the outcome of whichever future completes first, value or error; the others
    /// are then cancelled. Cancelling the returned future cancels every input.
    ///
    /// An empty array fails at once with ``FutureError/noFutures``.
    public static func race(_ futures: [Future<Value>]) -> Future<Value> {
        if futures.isEmpty { return .failed(FutureError.noFutures) }
        let winner = Future<Value>()
        let decision = Decision()
        for future in futures {
            future.whenComplete { outcome in
                // The losers are cancelled before the outcome is reported (see `Decision`).
                guard decision.claim() else { return }
                for other in futures where other !== future { other.cancel() }
                winner.complete(with: outcome)
            }
        }
        winner.onCancel { for future in futures { future.cancel() } }
        return winner
    }

    /// A future with the value of whichever future succeeds first; the others are then
    /// cancelled. It fails only when every future has failed, with the error of the last to
    /// fail. Cancelling the returned future cancels every input.
    ///
    /// An empty array fails at once with ``FutureError/noFutures``.
    public static func any(_ futures: [Future<Value>]) -> Future<Value> {
        if futures.isEmpty { return .failed(FutureError.noFutures) }
        let winner = Future<Value>()
        let decision = Decision()
        let failuresLeft = Protected(futures.count)
        for future in futures {
            future.whenComplete { outcome in
                switch outcome {
                case .success:
                    // The losers are cancelled before the value is reported (see `Decision`).
                    guard decision.claim() else { return }
                    for other in futures where other !== future { other.cancel() }
                    winner.complete(with: outcome)
                case .failure:
                    let last = failuresLeft.write { left in
                        left -= 1
                        return left == 0
                    }
                    if last, decision.claim() { winner.complete(with: outcome) }
                }
            }
        }
        winner.onCancel { for future in futures { future.cancel() } }
        return winner
    }
}
