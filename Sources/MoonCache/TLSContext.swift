import COpenSSL
import Glibc
import MoonGraph

/// OpenSSL's client settings for one `https://` remote cache, made at its
/// first connection: TLS 1.2 or later, the server's certificate verified
/// against the system's trust store (or `TLSFiles.authority` instead), and
/// the client certificate when one is given. Shared by the client's
/// connections (OpenSSL's `SSL_CTX` is safe across threads).
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    /// Bundles of the system's trusted certificates, by distribution, for a
    /// static moon built where OpenSSL looks elsewhere: Debian, Ubuntu,
    /// Arch and Alpine; Fedora and RHEL; openSUSE; and others.
    static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
    ]

    init(_ files: TLSFiles) throws(HTTPClient.Failure) {
        guard moon_tls_init() == 1, let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tls("OpenSSL could not start (\(Self.lastError()))")
        }
        self.context = context
        guard moon_tls_ctx_set_min_tls12(context) == 1 else { throw .tls("OpenSSL refuses TLS 1.2 (\(Self.lastError()))") }
        moon_tls_ctx_set_modes(context)
        moon_tls_ctx_refuse_passwords(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let authority = files.authority {
            try Self.check(authority, TLSFiles.authorityVariable)
            guard SSL_CTX_load_verify_locations(context, authority, nil) == 1 else {
                throw .tls("\(TLSFiles.authorityVariable)=\(authority) holds no PEM certificate (\(Self.lastError()))")
            }
        } else {
            trustTheSystem()
        }
        if let certificate = files.certificate {
            let key = files.key ?? certificate
            try Self.check(certificate, TLSFiles.certificateVariable)
            if files.key != nil { try Self.check(key, TLSFiles.keyVariable) }
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw .tls("\(TLSFiles.certificateVariable)=\(certificate) holds no PEM certificate (\(Self.lastError()))")
            }
            let keyName = files.key == nil ? TLSFiles.certificateVariable : TLSFiles.keyVariable
            let mismatch = HTTPClient.Failure.tls("\(keyName)=\(key) is not the key of \(TLSFiles.certificateVariable)=\(certificate)")
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
                let why = Self.lastError()
                if why.contains("mismatch") { throw mismatch }
                throw .tls("\(keyName)=\(key) holds no unencrypted PEM private key (\(why))")
            }
            guard SSL_CTX_check_private_key(context) == 1 else { throw mismatch }
        } else if let key = files.key {
            throw .tls("\(TLSFiles.keyVariable)=\(key) is set without \(TLSFiles.certificateVariable) (the client certificate)")
        }
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's own places (and `SSL_CERT_FILE`/`SSL_CERT_DIR`, which it
    /// reads), and the distribution's bundle when its file is not there.
    private func trustTheSystem() {
        SSL_CTX_set_default_verify_paths(context)
        ERR_clear_error()
        if getenv("SSL_CERT_FILE") != nil || getenv("SSL_CERT_DIR") != nil { return }
        if let own = X509_get_default_cert_file(), access(own, R_OK) == 0 { return }
        if let bundle = Self.systemBundles.first(where: { access($0, R_OK) == 0 }) {
            SSL_CTX_load_verify_locations(context, bundle, nil)
            ERR_clear_error()
        }
    }

    /// A file the user named is readable and a regular file of at most
    /// `fileLimit`, or the variable is named with why not. OpenSSL opens and
    /// reads the path itself, without a bound: a FIFO would block its open
    /// for ever (moon could not even be stopped), and a device or a sparse
    /// giant would be read to its end. The rules of moon's other input
    /// files (`InputFile`), as for a secret's `file:`.
    private static func check(_ path: String, _ variable: String) throws(HTTPClient.Failure) {
        var info = stat()
        guard stat(path, &info) == 0, access(path, R_OK) == 0 else { throw .tls("\(variable)=\(path): \(String(cString: strerror(errno)))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            if Int64(info.st_size) > fileLimit {
                throw .tls("\(variable)=\(path) is \(ByteSize.text(Int64(info.st_size))); a PEM file moon reads is at most \(ByteSize.text(fileLimit))")
            }
        case S_IFDIR:
            throw .tls("\(variable)=\(path) is a directory, not a PEM file")
        case S_IFIFO:
            throw .tls("\(variable)=\(path) is a FIFO, not a PEM file (moon reads only a regular file there)")
        default:
            throw .tls("\(variable)=\(path) is a device or a socket, not a PEM file (moon reads only a regular file there)")
        }
    }

    /// The largest PEM file read: a bundle of every public CA is about 200 KiB.
    static let fileLimit: Int64 = 16 << 20

    /// OpenSSL's reason for its last error on this thread, and clears them.
    static func lastError() -> String {
        let code = ERR_peek_last_error()
        ERR_clear_error()
        guard code != 0 else { return "no reason given" }
        return ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
