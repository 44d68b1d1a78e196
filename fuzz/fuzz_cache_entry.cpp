// Cache-entry decoder. The first byte picks the mode:
//   even: the bytes are a whole entry file, decoded as they are;
//   odd:  the bytes are the JSON line; the harness adds the magic (version
//         2 when the byte's bit 1 is set, else 1) and the right checksum, so
//         the fuzzer gets past the checksum to the parser.
// Either way decode() never throws, and an entry it accepts encodes to bytes
// that decode again to the same encoding. For a JSON line, the fast reader
// (scan_line) accepts nothing the full one (parse_line) rejects, and reads
// the same entry.
#include <string>

#include <gate/cache/entry.hpp>
#include <gate/cache/line.hpp>
#include <gate/util/sha256.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool wrap = (data[0] & 1) != 0;
  std::string_view rest = gate::fuzz::as_text(data + 1, size - 1);
  std::string bytes;
  if (wrap) {
    const int version = (data[0] & 2) != 0 ? 2 : 1;
    bytes = "gate-cache " + std::to_string(version) + "\n";
    bytes += rest;
    bytes += '\n';
    bytes += "sha256 " + gate::sha256_hex(bytes) + "\n";
    if (auto fast = gate::cache::detail::scan_line(rest, version, "")) {
      gate::cache::DecodeResult full = gate::cache::detail::parse_line(rest, version, "");
      if (!full.entry) gate::fuzz::violated("scan_line accepted a line parse_line rejects");
      if (gate::cache::encode(*fast) != gate::cache::encode(*full.entry))
        gate::fuzz::violated("scan_line and parse_line read different entries");
    }
  } else {
    bytes = rest;
  }
  gate::cache::DecodeResult r = gate::cache::decode(bytes, "");
  if (r.entry.has_value() == !r.reason.empty()) gate::fuzz::violated("decode: entry and reason disagree");
  if (!r.entry) return 0;
  std::string again;
  gate::fuzz::expecting_only_gate_errors([&] { again = gate::cache::encode(*r.entry); });
  if (again.empty()) gate::fuzz::violated("a decoded entry cannot be encoded");
  gate::cache::DecodeResult r2 = gate::cache::decode(again, r.entry->key);
  if (!r2.entry) {
    std::fprintf(stderr, "%s\n", r2.reason.c_str());
    gate::fuzz::violated("a re-encoded entry does not decode");
  }
  if (gate::cache::encode(*r2.entry) != again) gate::fuzz::violated("entry encoding is not stable");
  return 0;
}
