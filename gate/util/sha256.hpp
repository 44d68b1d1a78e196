#pragma once

#include <string>
#include <string_view>

namespace gate {

// Incremental SHA-256 (OpenSSL EVP); hex() finishes the digest.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view data);
  std::string hex(); // lowercase, 64 chars; the object cannot be updated after

private:
  void* ctx_;
};

std::string sha256_hex(std::string_view data);

} // namespace gate
