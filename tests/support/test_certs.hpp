#pragma once

#include <string>
#include <vector>

// Certificates made at test time with the OpenSSL API (EC P-256, SHA-256,
// valid from an hour ago for a day), so no key or certificate is committed.
namespace gate::testing {

struct Pem {
  std::string cert, key;
};

// A self-signed CA ("CA:TRUE", keyCertSign).
Pem make_test_ca(const std::string& common_name = "gate test CA");

// A server certificate signed by `ca` for the DNS names and IP literals
// given (subjectAltName; the first name is also the CN).
Pem issue_server_cert(const Pem& ca, const std::vector<std::string>& dns_names,
                      const std::vector<std::string>& ip_addresses = {});

} // namespace gate::testing
