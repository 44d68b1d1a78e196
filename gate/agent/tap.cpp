#include <gate/agent/tap.hpp>

#include <algorithm>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/net/sse.hpp>

namespace gate::agent {

namespace {

// One answer read as the runner reads a model's, plain JSON or a recorded
// event stream: its tool calls and usage.
model::Reply reply_of(const std::string& provider, const proxy::Reply& r) {
  model::ApiResponse a;
  a.status = r.status;
  a.headers.emplace_back("content-type", r.content_type);
  a.body = r.body;
  if (r.content_type.find("text/event-stream") != std::string::npos) {
    net::SseDecoder decoder;
    model::StreamAssembler assembler(provider, 0);
    for (const auto& e : decoder.feed(r.body))
      assembler.on_event(e.event, e.data, 0);
    assembler.finish(decoder.finish());
    a = model::to_non_streaming(provider, assembler.result(), a);
  }
  return model::parse_response(provider, a);
}

} // namespace

std::string encode_segment(const std::string& s) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '_' || c == '~' || (c == '.' && s != "." && s != "..");
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 15]);
    }
  }
  return out;
}

// Every agent of the run's workers can wait on the model at once; more
// threads than that would only sit idle.
Tap::Tap(const config::Config& cfg, const Environment& env, proxy::Server::ClientSource client)
    : provider_(cfg.model.provider), threads_(std::clamp(cfg.concurrency, 2, 64)),
      proxy_(cfg, env, std::move(client)) {
  proxy_.observe([this](const proxy::Observation& o) { note(o); });
}

Tap::~Tap() { stop(); }

void Tap::start() { proxy_.start(0, threads_); }

void Tap::stop() { proxy_.stop(); }

std::string Tap::base_url(const std::string& task_id, int run) const {
  return "http://127.0.0.1:" + std::to_string(port()) + "/t/" + encode_segment(task_id) + "/r/" +
         std::to_string(run);
}

ScopeLog Tap::take(const std::string& task_id, int run) {
  std::lock_guard lock(mutex_);
  const std::string scope = "/t/" + encode_segment(task_id) + "/r/" + std::to_string(run);
  auto it = scopes_.find(scope);
  if (it == scopes_.end()) return {};
  ScopeLog out = std::move(it->second);
  scopes_.erase(it);
  return out;
}

void Tap::note(const proxy::Observation& o) {
  const std::string scope = "/t/" + o.target.task + "/r/" + o.target.run;
  // Only a POST's 2xx answer is a model's answer (GET .../models is a list).
  const bool answered = o.method == "POST" && o.status >= 200 && o.status < 300;
  model::Reply answer;
  if (answered) answer = reply_of(provider_, *o.reply);
  std::lock_guard lock(mutex_);
  ScopeLog& log = scopes_[scope];
  ++log.requests;
  if (o.cache_hit) ++log.cache_hits;
  for (auto& c : answer.tool_calls)
    log.tool_calls.push_back({std::move(c.name), std::move(c.arguments_sha256)});
  if (answered && answer.usage) {
    log.prompt_tokens += answer.usage->prompt_tokens;
    log.completion_tokens += answer.usage->completion_tokens;
  } else if (answered) {
    log.usage_known = false;
  }
  if (o.missed) log.missing_keys.push_back(o.key);
  if (o.trust == replay::Trust::absent) log.untrusted.push_back({o.key, o.remote});
  if (o.trust == replay::Trust::differs) log.tampered.push_back({o.key, o.remote});
  if (!o.record_error.empty() && log.record_error.empty()) log.record_error = o.record_error;
}

proxy::Reply Tap::handle(const std::string& method, const std::string& target, const std::string& host,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& body) {
  return proxy_.handle(method, target, host, headers, body);
}

} // namespace gate::agent
