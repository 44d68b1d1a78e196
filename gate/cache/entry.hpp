#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gate::cache {

// One recorded model response. On disk (text, byte-stable for the same
// content, so a team can commit its cache):
//
//   entry    := magic "\n" json "\n" "sha256 " hex64 "\n"
//   magic    := "gate-cache " version        version := "1" | "2"
//   json     := one line of canonical JSON (sorted keys, no whitespace):
//               {"body": string, ["event_ms": [number, ...],] "headers": {name: value},
//                "key": hex64, "latency_ms": number, "path": string,
//                "provider": string, "recorded_at": string,
//                "replica": int, "request": json | null,
//                "route": json | null, "status": int,
//                "usage": {"completion_tokens": int, "prompt_tokens": int} | null}
//   hex64    := lowercase sha256 of magic "\n" json "\n"
//
// `event_ms` is there exactly when the entry has event times, and then the
// version is 2; an entry without them is version 1 and byte for byte what
// gate wrote before event times existed, so an old cache stays valid and an
// older gate says "newer than this gate" rather than misreading one.
// `request` and `route` hold the canonical form of Entry::request/route;
// null stands for an empty string. Header names are lowercase, sorted, and
// only those header_allowed() accepts; a repeated name is joined with ", ".
// Numbers are read exactly (correctly rounded), so canonical text reads back
// to itself. A reader rejects anything else: wrong magic, a future or
// unknown version, a checksum mismatch, a truncated or empty file, a key
// that is not the file's name, a missing, mistyped or unknown field, a
// header off the allow-list, and a JSON line that is not byte for byte the
// one encode would write for what was read (reason "not in canonical form
// (field F)", F the first field that differs).
struct Entry {
  std::string key; // hex sha256, equals the file name
  std::string provider;
  // What the key was made of, kept for people reading a cache: a model
  // task's entry has the endpoint path (/chat/completions) and its run index
  // (make_key); a proxied agent call's has the scoped path
  // (/t/<task>/r/<run>/v1/...) and the call's occurrence within that run
  // (make_call_key). The key, not these fields, is what a lookup
  // trusts, so the two meanings share the fields rather than a new format
  // version that every committed cache would have to be rewritten for.
  std::string path;
  int replica = 0;
  std::string request; // canonical JSON of the redacted request body
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers; // allow-listed, lowercase names, sorted
  std::string body;                                         // redacted response body
  // For a recorded stream: when each server-sent event ended (ms after the
  // request went upstream, non-decreasing), so a replay can pace them.
  std::vector<double> event_ms;
  std::optional<std::pair<std::int64_t, std::int64_t>> usage; // prompt, completion
  double latency_ms = 0;
  std::string recorded_at; // ISO 8601 UTC
  std::string route;       // canonical JSON of the route
};

// The newest version this gate reads and writes (2 only for entries with
// event times).
inline constexpr int k_format_version = 2;

// The bytes of `e` in the format above. Every text field passes through
// gate::redact() once more (the caller should already have redacted), the
// header list through header_allowed(). A non-finite latency is stored as 0.
// Throws Error(bad_input) naming the key when `request` or `route` is not
// JSON or a text field is not valid UTF-8: such an entry could never be read.
std::string encode(const Entry& e);

// Why an entry could not be read; empty `reason` means ok.
struct DecodeResult {
  std::optional<Entry> entry;
  std::string
      reason; // "checksum mismatch", "wrong magic", "format version 7 is newer than this gate (1)", ...
};
// Checks magic, version and checksum before parsing any JSON. An empty
// `expected_key` skips the file-name check (for tools reading one file).
DecodeResult decode(std::string_view bytes, std::string_view expected_key);

// Headers that may be stored; everything else (authorization, api keys,
// cookies, organization ids, unknown headers) is dropped. Case-insensitive.
bool header_allowed(std::string_view lowercase_name);

} // namespace gate::cache
