#include <gate/cache/store.hpp>

#include <gate/util/sha256.hpp>

namespace gate::cache {

namespace {

// field := name "\0" decimal(byte length of value) ":" value
// The length prefix keeps ("ab", "c") and ("a", "bc") apart; the name keeps
// a field from standing in for another.
void add_field(Sha256& h, std::string_view name, std::string_view value) {
  h.update(name);
  h.update(std::string_view("\0", 1));
  h.update(std::to_string(value.size()));
  h.update(":");
  h.update(value);
}

void add_request(Sha256& h, std::string_view provider, std::string_view path, std::string_view request) {
  add_field(h, "provider", provider);
  add_field(h, "path", path);
  add_field(h, "request", request);
}

} // namespace

// key := sha256(field("provider") field("path") field("request") field("replica", decimal))
std::string make_key(std::string_view provider, std::string_view path, std::string_view canonical_request,
                     int replica) {
  Sha256 h;
  add_request(h, provider, path, canonical_request);
  add_field(h, "replica", std::to_string(replica));
  return h.hex();
}

// call_key := sha256(field("provider") field("path") field("request") field("run") field("occurrence",
// decimal))
std::string make_call_key(std::string_view provider, std::string_view path,
                          std::string_view canonical_request, std::string_view run, int occurrence) {
  Sha256 h;
  add_request(h, provider, path, canonical_request);
  add_field(h, "run", run);
  add_field(h, "occurrence", std::to_string(occurrence));
  return h.hex();
}

// fingerprint := sha256(field("provider") field("path") field("request"))
std::string make_fingerprint(std::string_view provider, std::string_view path,
                             std::string_view canonical_request) {
  Sha256 h;
  add_request(h, provider, path, canonical_request);
  return h.hex();
}

} // namespace gate::cache
