import Testing
import MoonCommand

@Suite struct RetryPolicyTests {
    @Test func delayGrowsByBackoffAndIsCapped() {
        let policy = RetryPolicy(times: 5, delay: .seconds(1), backoff: 2, maxDelay: .seconds(5))
        #expect((1...5).map(policy.delay(afterAttempt:)) == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        #expect(policy.attempts == 6)
    }

    @Test func constantDelayByDefault() {
        let policy = RetryPolicy(times: 3, delay: .milliseconds(250))
        #expect(policy.delay(afterAttempt: 3) == .milliseconds(250))
        #expect(RetryPolicy.none.delay(afterAttempt: 1) == .zero)
    }

    @Test func hugeBackoffDoesNotOverflow() {
        let policy = RetryPolicy(times: 1000, delay: .seconds(1), backoff: 10)
        #expect(policy.delay(afterAttempt: 1000) == .seconds(365 * 24 * 3600))
    }
}
