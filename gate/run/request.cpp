#include <gate/run/request.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <tuple>

#include <gate/cache/store.hpp>
#include <gate/check/judge.hpp>
#include <gate/model/stream.hpp>
#include <gate/util/error.hpp>
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

namespace {

PreparedRequest prepare_call(const config::ModelConfig& m, const std::string& system,
                             const std::vector<model::ChatMessage>& messages, const config::Config& cfg) {
  PreparedRequest p;
  p.call.provider = model::dialect(m);
  p.call.path = model::endpoint_path(m);
  p.call.body = model::build_request(m, system, messages);
  // Hashed before streaming is asked for: a streamed answer is stored in
  // the plain form, so turning model.stream on or off keeps the cache.
  p.hashed_body = apply_ignore(p.call.body, cfg.cache.ignore);
  p.fingerprint = cache::make_fingerprint(p.call.provider, p.call.path, p.hashed_body);
  if (m.stream) {
    p.call.body = model::with_streaming(p.call.provider, p.call.body);
    p.call.stream = true;
  }
  p.call.max_tokens = m.max_tokens.value_or(0);
  return p;
}

} // namespace

void refuse_shared_keys(const std::vector<const suite::Case*>& cases,
                        const std::vector<PreparedRequest>& prepared) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i]->kind != suite::Kind::agent) order.push_back(i);
  // By fingerprint (the key without the replica), then by suite order, so
  // that the error names the first two tasks of a clash.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(prepared[a].fingerprint, a) < std::tie(prepared[b].fingerprint, b);
  });
  for (std::size_t j = 1; j < order.size(); ++j) {
    const PreparedRequest& a = prepared[order[j - 1]];
    const PreparedRequest& b = prepared[order[j]];
    if (a.fingerprint != b.fingerprint || a.call.body == b.call.body) continue;
    std::string names;
    json::append_quoted(cases[order[j - 1]]->id, names);
    names += " and ";
    json::append_quoted(cases[order[j]]->id, names);
    throw_bad_input("cache.ignore makes tasks " + names +
                    " share one cache key: their requests differ only in what it removes, so replay would "
                    "give one task the other's answers; remove that pointer from cache.ignore");
  }
}

PreparedRequest prepare(const suite::Case& c, const config::Config& cfg) {
  std::vector<model::ChatMessage> messages;
  messages.reserve(c.input.size());
  for (const auto& m : c.input)
    messages.push_back({m.role, m.content});
  return prepare_call(cfg.model, c.system, messages, cfg);
}

PreparedRequest resend(const cache::Entry& recorded, const config::Config& cfg) {
  PreparedRequest p;
  p.call.provider = recorded.provider;
  p.call.path = recorded.path;
  p.call.body = recorded.request;
  p.hashed_body = apply_ignore(recorded.request, cfg.cache.ignore);
  p.fingerprint = cache::make_fingerprint(p.call.provider, p.call.path, p.hashed_body);
  if (cfg.model.stream) {
    p.call.body = model::with_streaming(p.call.provider, p.call.body);
    p.call.stream = true;
  }
  p.call.max_tokens = cfg.model.max_tokens.value_or(0);
  return p;
}

config::ModelConfig judge_model(const config::Config& cfg) {
  config::ModelConfig m = cfg.model;
  if (!cfg.judge.model.empty()) m.name = cfg.judge.model;
  m.temperature = cfg.judge.temperature;
  m.top_p.reset();
  m.max_tokens = cfg.judge.max_tokens;
  // The grader may be another model: the fields of the one under test are
  // not its fields.
  m.extra.clear();
  return m;
}

PreparedRequest prepare_judge(const suite::Case& c, const config::Config& cfg, const std::string& rubric,
                              const std::string& answer) {
  std::vector<std::pair<std::string, std::string>> conversation;
  if (!c.system.empty()) conversation.emplace_back("system", c.system);
  for (const auto& m : c.input)
    conversation.emplace_back(m.role, m.content);
  check::JudgePrompt prompt = check::judge_prompt(rubric, conversation, answer);
  return prepare_call(judge_model(cfg), prompt.system, {{"user", prompt.user}}, cfg);
}

} // namespace gate::run
