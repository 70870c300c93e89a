import COpenSSL
import Glibc
import Testing
@testable import MoonCache

/// OpenSSL as moon sets it up for an `https://` cache.
@Suite struct TLSContextTests {
    /// moon's end leaves OpenSSL's state alone: an exit handler freeing it
    /// raced the cache's threads, which still used it or freed their part
    /// of it as they ended (a double free that aborted a run at its exit).
    /// The child process makes moon's TLS settings and exits; OpenSSL's
    /// own cleanup, if it ran, would call `OPENSSL_atexit`'s handler.
    @Test func exitingDoesNotTearOpenSSLDown() throws {
        let child = fork()
        try #require(child >= 0)
        if child == 0 {
            alarm(30)
            let null = open("/dev/null", O_WRONLY)
            dup2(null, 1)
            dup2(null, 2)
            guard (try? TLSContext(TLSFiles())) != nil else { _exit(2) }
            OPENSSL_atexit { _exit(3) }
            exit(0)
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        #expect(exited && code != 2, "the child could not make the TLS settings (status \(status))")
        #expect(!(exited && code == 3), "OpenSSL's exit handler ran: it frees what the cache's threads may still use")
        #expect(exited && code == 0, "status \(status)")
    }
}
