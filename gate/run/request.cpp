#include <gate/run/request.hpp>

#include <boost/json/parse.hpp>

#include <gate/cache/store.hpp>
#include <gate/util/json.hpp>

namespace gate::run {

namespace {

// RFC 6901 unescaping of one reference token.
std::string unescape_token(std::string_view token) {
  std::string out;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out.push_back(token[i + 1] == '1' ? '/' : '~');
      ++i;
    } else {
      out.push_back(token[i]);
    }
  }
  return out;
}

void erase_pointer(boost::json::value& root, std::string_view pointer) {
  if (pointer.empty() || pointer.front() != '/') return;
  std::vector<std::string> tokens;
  std::size_t start = 1;
  for (;;) {
    std::size_t slash = pointer.find('/', start);
    tokens.push_back(unescape_token(pointer.substr(start, slash - start)));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  boost::json::value* at = &root;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (auto* o = at->if_object()) {
      at = o->if_contains(tokens[i]);
    } else if (auto* a = at->if_array()) {
      char* end = nullptr;
      unsigned long idx = std::strtoul(tokens[i].c_str(), &end, 10);
      at = (end != nullptr && *end == '\0' && idx < a->size()) ? &(*a)[idx] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return;
  }
  const std::string& last = tokens.back();
  if (auto* o = at->if_object()) {
    o->erase(last);
  } else if (auto* a = at->if_array()) {
    char* end = nullptr;
    unsigned long idx = std::strtoul(last.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && idx < a->size()) a->erase(a->begin() + static_cast<long>(idx));
  }
}

} // namespace

std::string apply_ignore(const std::string& canonical_json, const std::vector<std::string>& pointers) {
  if (pointers.empty()) return canonical_json;
  boost::json::value v = boost::json::parse(canonical_json);
  for (const auto& p : pointers)
    erase_pointer(v, p);
  return json::canonical(v);
}

PreparedRequest prepare(const suite::Case& c, const config::Config& cfg) {
  std::vector<model::ChatMessage> messages;
  messages.reserve(c.input.size());
  for (const auto& m : c.input)
    messages.push_back({m.role, m.content});
  PreparedRequest p;
  p.call.provider = cfg.model.provider;
  p.call.path = model::endpoint_path(cfg.model);
  p.call.body = model::build_request(cfg.model, c.system, messages);
  p.hashed_body = apply_ignore(p.call.body, cfg.cache.ignore);
  p.fingerprint = cache::make_fingerprint(p.call.provider, p.call.path, p.hashed_body);
  return p;
}

} // namespace gate::run
