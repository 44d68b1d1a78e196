// Redaction: any text (an upstream body, a stream, a log line) goes through
// redact() without a crash, and what comes out holds no registered key in
// any form redact() looks for: raw, its last 8 characters, JSON-escaped,
// split across stream events, base64 (docs/proxy.md "Keys and secrets").
// Only a key of 8 or more characters is registered here: a shorter one is
// redacted where it stands alone, and a replacement can leave it alone
// where it was not before, so "no form left" is not a property for it.
#include <string>

#include <gate/util/redact.hpp>

#include "fuzz_support.hpp"

namespace {

const std::string k_key = "sk-canary-7f3a9b1c2d4e5f60";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool registered = (gate::register_secret(k_key), true);
  (void)registered;
  const std::string_view text = gate::fuzz::as_text(data, size);
  const std::string out = gate::redact(text);
  if (out.find(k_key) != std::string::npos || out.find("2d4e5f60") != std::string::npos)
    gate::fuzz::violated("the raw key or its tail survives redaction");
  if (gate::contains_secret(out)) gate::fuzz::violated("a redacted text still holds a form of the key");
  return 0;
}
