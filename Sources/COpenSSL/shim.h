// The system's OpenSSL 3 (libssl-dev), for the remote cache's https://
// connections. Linked statically into the release binary (libssl.a,
// libcrypto.a) and dynamically into the debug one; nothing of it runs
// unless an https:// URL is used (docs/decisions.md, "TLS").
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

// What OpenSSL defines as macros, which Swift does not import.

// No openssl.cnf: a static moon on another system must not read that
// system's config (which may load modules a static binary cannot).
// No exit handler: OpenSSL's would free its state while the cache's
// threads still use it or end (their own cleanup frees it a second
// time); the process's end frees everything anyway.
static inline uint64_t moon_tls_init_options(void) {
    return OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT;
}

static inline int moon_tls_init(void) {
    return OPENSSL_init_ssl(moon_tls_init_options(), NULL);
}

static inline int moon_tls_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

static inline void moon_tls_ctx_set_modes(SSL_CTX *ctx) {
    // A non-blocking write may go out in parts, and be retried from
    // another address of the same bytes.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

static inline int moon_tls_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline const char *moon_tls_version(const SSL *ssl) {
    return SSL_get_version(ssl);
}

static int moon_tls_no_password(char *buffer, int size, int writing, void *data) {
    (void)buffer; (void)size; (void)writing; (void)data;
    return 0;
}

static inline void moon_tls_ctx_refuse_passwords(SSL_CTX *ctx) {
    // An encrypted key fails to load instead of OpenSSL asking for its
    // passphrase on the terminal in the middle of a run.
    SSL_CTX_set_default_passwd_cb(ctx, moon_tls_no_password);
}
