import COpenSSL
import Glibc

/// One TLS connection over a connected non-blocking socket: what
/// `HTTPConnection` reads and writes through for an `https://` cache, step
/// by step as the plain socket is (a step that cannot move says which
/// readiness to wait for; the waiting, and its bounds, stay the
/// connection's). The server's certificate must verify for `host` (a name
/// by SNI and the certificate's names, an address by its IP entries).
final class TLSStream {
    /// What one read or write did.
    enum Step {
        case moved(Int)
        /// The server closed its side (a TLS close_notify).
        case ended
        /// Nothing moved: wait until the socket is ready for these events.
        case wait(Int16)
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let host: String

    init(socket: Int32, context: TLSContext, host: String) throws(HTTPClient.Failure) {
        guard let ssl = SSL_new(context.context) else { throw .tls("OpenSSL could not start TLS on the connection (\(TLSContext.lastError()))") }
        self.ssl = ssl
        self.host = host
        guard SSL_set_fd(ssl, socket) == 1 else { throw .tls("OpenSSL could not take the socket (\(TLSContext.lastError()))") }
        let param = SSL_get0_param(ssl)
        if Self.isAddress(host) {
            // RFC 6066: no SNI for an address; it is matched against the certificate's IP entries.
            X509_VERIFY_PARAM_set1_ip_asc(param, host)
        } else {
            X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard SSL_set1_host(ssl, host) == 1, moon_tls_set_server_name(ssl, host) == 1 else {
                throw .tls("OpenSSL refuses the host name \(host) (\(TLSContext.lastError()))")
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Runs the handshake on the waiter's current stage (connecting); a
    /// certificate that does not verify, or a server that speaks no TLS,
    /// is `Failure.tls` naming the problem.
    func handshake(socket: Int32, _ wait: HTTPClient.Waiter) throws {
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { return }
            switch step(result) {
            case .wait(let events): _ = try wait.until(socket, ready: events)
            case .moved, .ended: throw HTTPClient.Failure.tls("the server closed the connection during the TLS handshake")
            case .failed(let why): throw HTTPClient.Failure.tls(handshakeFailure(why))
            }
        }
    }

    func send(_ bytes: UnsafeRawPointer, _ count: Int) -> Step {
        ERR_clear_error()
        let n = SSL_write(ssl, bytes, Int32(clamping: count))
        return n > 0 ? .moved(Int(n)) : step(n)
    }

    func receive(_ bytes: UnsafeMutableRawPointer, _ count: Int) -> Step {
        ERR_clear_error()
        let n = SSL_read(ssl, bytes, Int32(clamping: count))
        return n > 0 ? .moved(Int(n)) : step(n)
    }

    /// Whether the idle connection's server closed it or sent something
    /// unasked. What TLS sends by itself (TLS 1.3 resumption tickets) makes the
    /// socket readable without meaning either.
    var isStale: Bool {
        var byte: UInt8 = 0
        ERR_clear_error()
        let n = SSL_peek(ssl, &byte, 1)
        if n > 0 { return true }
        if case .wait = step(n) { return false }
        return true
    }

    /// What a read, write or handshake that did not move bytes means.
    private func step(_ result: Int32) -> Step {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ: return .wait(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .wait(Int16(POLLOUT))
        case SSL_ERROR_ZERO_RETURN: return .ended
        case SSL_ERROR_SYSCALL:
            let number = errno
            ERR_clear_error()
            if number == EINTR { return .wait(Int16(POLLIN | POLLOUT)) }
            return .failed(number == 0 ? "the connection closed" : String(cString: strerror(number)))
        default: return .failed(TLSContext.lastError())
        }
    }

    /// Why the handshake failed, in the words a user can act on.
    private func handshakeFailure(_ why: String) -> String {
        let verdict = Int32(SSL_get_verify_result(ssl))
        switch verdict {
        case X509_V_OK:
            if why.contains("wrong version number") || why.contains("packet length too long") {
                return "the TLS handshake failed (\(why)): is it an http:// server?"
            }
            if why.contains("certificate required") || why.contains("handshake failure") {
                return "the TLS handshake failed (\(why)): the server may want a client certificate "
                    + "(\(TLSFiles.certificateVariable) and \(TLSFiles.keyVariable))"
            }
            return "the TLS handshake failed (\(why))"
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_SIGNATURE_FAILURE:
            return "certificate not trusted (self-signed, or signed by a CA moon does not trust); "
                + "set \(TLSFiles.authorityVariable)=FILE.pem to trust a private CA"
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return "certificate is not for \(host) (it names another host)"
        case X509_V_ERR_CERT_HAS_EXPIRED: return "certificate expired"
        case X509_V_ERR_CERT_NOT_YET_VALID: return "certificate not valid yet (is the clock right?)"
        default:
            return "certificate not accepted (\(X509_verify_cert_error_string(Int(verdict)).map { String(cString: $0) } ?? "error \(verdict)"))"
        }
    }

    private static func isAddress(_ host: String) -> Bool {
        var bytes = in6_addr()
        return inet_pton(AF_INET, host, &bytes) == 1 || inet_pton(AF_INET6, host, &bytes) == 1
    }
}
