import Glibc

extension HTTPClient {
    /// Bounds one request in time, stage by stage, so that a server that
    /// trickles costs no more than one that is silent:
    /// - connecting, and the answer's head (status line, headers, any
    ///   interim `100 Continue`), each within `timeout`;
    /// - sending the request, and receiving the answer's body, each within
    ///   `timeout` plus one second per `minimumRate` bytes moved (a large
    ///   blob at a sane rate finishes; a byte now and then does not);
    /// - and never `timeout` without a byte moving, so a server that freezes
    ///   in the middle of a large blob costs one timeout, not its allowance.
    /// `shouldStop` is looked at least every 50 ms. Over it all, a hard
    /// bound on the whole request, whatever its bytes earned: four timeouts
    /// (one per stage) plus the time `expected` bytes take at `minimumRate`
    /// (the bytes it sends and the ones it keeps, as the entry declares
    /// them; 256 KiB when unknown), so a server whose answer never ends, however
    /// fast or slow it sends, costs a bounded time.
    final class Waiter {
        enum Stage {
            case connecting, sending, awaitingHead, receivingBody

            /// Whether the bytes moved in this stage earn it more time.
            var earns: Bool { self == .sending || self == .receivingBody }
        }

        /// Bytes per second a body must average (256 kbit/s).
        static let minimumRate = 32.0 * 1024

        let timeout: UInt64
        let shouldStop: () -> Bool
        private var stage = Stage.connecting
        private var stageStart: UInt64
        private var moved: UInt64 = 0
        private var lastProgress: UInt64

        /// The end of the whole request.
        let overall: UInt64

        /// What the hard bound allows for a body of unknown size.
        static let unknownSize: Int64 = 256 << 10

        init(timeout: UInt64, expected: Int64? = nil, shouldStop: @escaping () -> Bool) {
            self.timeout = timeout
            self.shouldStop = shouldStop
            stageStart = HTTPClient.now()
            lastProgress = stageStart
            let bytes = Double(max(0, expected ?? Self.unknownSize))
            overall = stageStart + 4 * timeout + UInt64(min(bytes / Self.minimumRate * 1e9, 1e15))
        }

        /// A new stage starts now, with its own bound.
        func begin(_ stage: Stage) {
            self.stage = stage
            stageStart = HTTPClient.now()
            lastProgress = stageStart
            moved = 0
        }

        /// When the current stage ends, however fast its bytes come.
        private var stageDeadline: UInt64 {
            let earned = stage.earns ? UInt64(min(Double(moved) / Self.minimumRate * 1e9, 1e15)) : 0
            return stageStart + timeout + earned
        }

        /// When waiting gives up: the stage's end, or `timeout` after the last byte.
        private var deadline: UInt64 { min(lastProgress + timeout, stageDeadline, overall) }

        /// `bytes` moved. Throws past the stage's end (bytes that keep
        /// coming need no wait, so the check is here too) and at a stop.
        func progressed(_ bytes: Int) throws {
            if shouldStop() { throw Failure.stopped }
            moved += UInt64(bytes)
            lastProgress = HTTPClient.now()
            if lastProgress > min(stageDeadline, overall) { throw Failure.timedOut }
        }

        /// Waits until `fd` is ready for `events`; throws at the deadline or a stop.
        /// Past the deadline the socket is still looked at once: a moon
        /// that was not scheduled for a while does not blame the server
        /// for what already came.
        func until(_ fd: Int32, ready events: Int16) throws -> Bool {
            while true {
                if shouldStop() { throw Failure.stopped }
                let now = HTTPClient.now(), deadline = deadline
                let left = deadline > now ? deadline - now : 0
                var entry = pollfd(fd: fd, events: events, revents: 0)
                let milliseconds = left == 0 ? 0 : Int32(min(50, left / 1_000_000 + 1))
                let ready = poll(&entry, 1, milliseconds)
                if ready > 0 { return true }
                if ready < 0 && errno != EINTR { throw Failure.unreachable(String(cString: strerror(errno))) }
                if left == 0 { throw Failure.timedOut }
            }
        }
    }
}
