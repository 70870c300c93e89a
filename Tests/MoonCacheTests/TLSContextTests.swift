import COpenSSL
import Testing
@testable import MoonCache

/// OpenSSL as moon sets it up for an `https://` cache.
@Suite struct TLSContextTests {
    /// moon's end leaves OpenSSL's state alone: an exit handler freeing it
    /// raced the cache's threads, which still used it or freed their part
    /// of it as they ended (a double free that aborted a run at its exit).
    /// OpenSSL registers its handler at its first initialisation unless
    /// told not to, and moon's is the only one (`TLSContext`).
    @Test func openSSLIsSetUpWithoutAnExitHandler() throws {
        #expect(moon_tls_init_options() & UInt64(OPENSSL_INIT_NO_ATEXIT) != 0)
        #expect(moon_tls_init_options() & UInt64(OPENSSL_INIT_NO_LOAD_CONFIG) != 0)
        _ = try TLSContext(TLSFiles())
    }
}
