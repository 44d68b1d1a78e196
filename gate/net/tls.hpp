#pragma once

#include <boost/asio/ssl/context.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/system/error_code.hpp>
#include <openssl/ssl.h>

namespace gate::net {

struct Settings;

// The client TLS context for https base URLs: TLS 1.2+, verify_peer, trust
// from the system store (or the bundle and directory SSL_CERT_FILE /
// SSL_CERT_DIR name in `settings`) plus `ca_file` when not empty. A trust setting that names a missing or
// empty source throws Error(cannot_run) naming the setting; so does having no trust anchor at all. Never
// falls back to no verification.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::filesystem::path& ca_file,
                                                            const Settings& settings);

// Per connection, before the handshake: SNI with the bare host name (not
// for IP literals, RFC 6066) and host-name (or IP) verification. `host` may
// be a bracketed IPv6 literal. Returns false when OpenSSL refused.
bool prepare_tls_session(SSL* ssl, const std::string& host);

// Why a handshake failed, as the status-0 body: "tls: certificate does not
// match host H", "tls: certificate for H not trusted: ..." or
// "tls: handshake with H failed: ...", or, when the server answered the
// handshake with plain HTTP (an https:// URL for an http:// server, which
// OpenSSL calls only "wrong version number"), that, naming `where`
// (HOST:PORT) and the fix. Empty when the failure was not TLS's (a reset
// or an EOF from the network), which may be retried.
std::string tls_failure(SSL* ssl, const boost::system::error_code& ec, const std::string& host,
                        const std::string& where);

} // namespace gate::net
