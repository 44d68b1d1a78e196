#include <tests/support/test_certs.hpp>

#include <memory>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <gate/util/error.hpp>

namespace gate::testing {

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;
using Bio = std::unique_ptr<BIO, Free>;

void check(bool ok, const char* what) {
  if (!ok) throw_cannot_run(std::string("test certificates: ") + what + " failed");
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string key_pem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "writing a key");
  return bio_text(bio.get());
}

std::string cert_pem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "writing a certificate");
  return bio_text(bio.get());
}

Key read_key(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(key != nullptr, "reading the CA key");
  return key;
}

Cert read_cert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  check(cert != nullptr, "reading the CA certificate");
  return cert;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "making an extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, not yet signed; `issuer` null = self.
Cert new_cert(EVP_PKEY* key, const std::string& cn, X509* issuer) {
  Cert cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  check(RAND_bytes(serial, sizeof serial) == 1, "RAND_bytes");
  serial[0] &= 0x7f; // a positive serial
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  return cert;
}

} // namespace

Pem make_test_ca(const std::string& common_name) {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EC key generation");
  Cert cert = new_cert(key.get(), common_name, nullptr);
  add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "signing the CA");
  return {cert_pem(cert.get()), key_pem(key.get())};
}

Pem issue_server_cert(const Pem& ca, const std::vector<std::string>& dns_names,
                      const std::vector<std::string>& ip_addresses) {
  Key ca_key = read_key(ca.key);
  Cert ca_cert = read_cert(ca.cert);
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EC key generation");
  std::string cn = !dns_names.empty()     ? dns_names.front()
                   : ip_addresses.empty() ? "server"
                                          : ip_addresses.front();
  Cert cert = new_cert(key.get(), cn, ca_cert.get());
  std::string san;
  for (const auto& d : dns_names)
    san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : ip_addresses)
    san += (san.empty() ? "IP:" : ",IP:") + ip;
  if (!san.empty()) add_extension(cert.get(), ca_cert.get(), NID_subject_alt_name, san);
  add_extension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid");
  check(X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0, "signing a server certificate");
  return {cert_pem(cert.get()), key_pem(key.get())};
}

} // namespace gate::testing
