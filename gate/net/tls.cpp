#include <gate/net/tls.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <system_error>

#include <gate/net/settings.hpp>
#include <gate/util/error.hpp>

namespace gate::net {

namespace {

namespace ssl = boost::asio::ssl;

// Certificates a PEM file holds; -1 when it cannot be opened.
int count_certificates(const std::string& path) {
  BIO* bio = BIO_new_file(path.c_str(), "r");
  if (bio == nullptr) {
    ERR_clear_error();
    return -1;
  }
  int n = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_free(cert);
    ++n;
  }
  // The loop ends on "no start line"; that is the normal end of the file.
  ERR_clear_error();
  BIO_free(bio);
  return n;
}

void require_bundle(const std::string& path, const std::string& setting) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw_cannot_run(setting + " names " + path + ", which is not a readable file; TLS needs a trust store");
  int n = count_certificates(path);
  if (n < 0) throw_cannot_run(setting + " names " + path + ", which cannot be opened");
  if (n == 0) throw_cannot_run(setting + " names " + path + ", which holds no PEM certificate");
}

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

} // namespace

std::shared_ptr<ssl::context> make_tls_context(const std::filesystem::path& ca_file,
                                               const Settings& settings) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_verify_mode(ssl::verify_peer);

  // The trust OpenSSL's set_default_verify_paths would load, with the two
  // variables taken from `settings` rather than read by OpenSSL itself; and
  // a variable that names nothing is an error, not silently no anchors.
  const std::string file_env = X509_get_default_cert_file_env();
  const std::string dir_env = X509_get_default_cert_dir_env();
  boost::system::error_code ec;
  int anchors_in_file = 0;
  if (!settings.cert_file.empty()) {
    require_bundle(settings.cert_file, file_env);
    ctx->load_verify_file(settings.cert_file, ec);
    if (ec) throw_cannot_run(file_env + " " + settings.cert_file + ": cannot load: " + ec.message());
    anchors_in_file = 1;
  } else if (count_certificates(X509_get_default_cert_file()) > 0) {
    ctx->load_verify_file(X509_get_default_cert_file(), ec);
    if (ec) throw_cannot_run("TLS: cannot load the system trust store: " + ec.message());
    anchors_in_file = 1;
  }
  std::error_code fec;
  if (!settings.cert_dir.empty() && !std::filesystem::is_directory(settings.cert_dir, fec))
    throw_cannot_run(dir_env + " names " + settings.cert_dir +
                     ", which is not a directory; TLS needs a trust store");
  const std::string dir = settings.cert_dir.empty() ? X509_get_default_cert_dir() : settings.cert_dir;
  const bool have_dir = std::filesystem::is_directory(dir, fec);
  if (have_dir) {
    ctx->add_verify_path(dir, ec);
    if (ec) throw_cannot_run("TLS: cannot use the trust directory " + dir + ": " + ec.message());
  }
  bool have_ca_file = false;
  if (!ca_file.empty()) {
    require_bundle(ca_file.string(), "model.ca_file");
    ctx->load_verify_file(ca_file.string(), ec);
    if (ec) throw_cannot_run("model.ca_file " + ca_file.string() + ": cannot load: " + ec.message());
    have_ca_file = true;
  }
  if (anchors_in_file == 0 && !have_dir && !have_ca_file)
    throw_cannot_run(std::string("TLS: no trust store: ") + X509_get_default_cert_file() +
                     " holds no certificate" + " and no " + X509_get_default_cert_dir_env() +
                     " or model.ca_file is set");
  return ctx;
}

bool prepare_tls_session(SSL* ssl, const std::string& bracketed) {
  std::string host = bracketed;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (is_ip_literal(host)) return X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1;
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 &&
         X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0) == 1;
}

std::string tls_failure(SSL* ssl, const boost::system::error_code& ec, const std::string& host,
                        const std::string& where) {
  long verify = SSL_get_verify_result(ssl);
  if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH)
    return "tls: certificate does not match host " + host;
  if (verify != X509_V_OK)
    return "tls: certificate for " + host + " not trusted: " + X509_verify_cert_error_string(verify);
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    // A plain HTTP server reads the ClientHello as a bad request and sends
    // "HTTP/1.1 400 ...": OpenSSL sees a record of version "HT" (or, read
    // as a length, one too long).
    const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
        reason == SSL_R_PACKET_LENGTH_TOO_LONG)
      return "tls: the server at " + where +
             " answered plain HTTP to a TLS handshake: use http:// (and allow it with GATE_ALLOW_HTTP=" +
             host + " unless it is loopback)";
    return "tls: handshake with " + host + " failed: " + ec.message();
  }
  return "";
}

} // namespace gate::net
