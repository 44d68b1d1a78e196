#pragma once

// A ModelClient for unit tests of the runner (ninja's fake CommandRunner
// habit): scripted replies by the last user message, every call counted and
// kept, nothing on the network.

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/model/api.hpp>

namespace gate::testing {

// An OpenAI chat.completion answering `text`, with the usage given.
inline model::ApiResponse openai_answer(const std::string& text, std::int64_t prompt_tokens = 3,
                                        std::int64_t completion_tokens = 2) {
  boost::json::object message{{"role", "assistant"}, {"content", text}};
  boost::json::object choice{{"index", 0}, {"message", std::move(message)}, {"finish_reason", "stop"}};
  boost::json::object usage{{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}};
  boost::json::object body{{"id", "chatcmpl-fake"},
                           {"object", "chat.completion"},
                           {"choices", boost::json::array{std::move(choice)}},
                           {"usage", std::move(usage)}};
  model::ApiResponse r;
  r.status = 200;
  r.headers = {{"content-type", "application/json"}};
  r.body = boost::json::serialize(body);
  r.latency_ms = 12;
  r.attempt_log = {{200, "", 0, 12, model::Usage{prompt_tokens, completion_tokens}}};
  return r;
}

// An OpenAI chat.completion whose message calls `calls` (name, arguments
// JSON text) in order, finish reason "tool_calls".
inline model::ApiResponse openai_tool_calls(const std::vector<std::pair<std::string, std::string>>& calls) {
  model::ApiResponse r = openai_answer("");
  boost::json::value body = boost::json::parse(r.body);
  boost::json::array out;
  for (const auto& [name, arguments] : calls)
    out.push_back({{"id", "call_" + std::to_string(out.size())},
                   {"type", "function"},
                   {"function", {{"name", name}, {"arguments", arguments}}}});
  auto& choice = body.at("choices").as_array().at(0).as_object();
  choice["message"].as_object()["tool_calls"] = std::move(out);
  choice["finish_reason"] = "tool_calls";
  r.body = boost::json::serialize(body);
  return r;
}

// An error answer of `status` as OpenAI words it.
inline model::ApiResponse openai_error(int status, const std::string& message) {
  model::ApiResponse r;
  r.status = status;
  r.headers = {{"content-type", "application/json"}};
  r.body = boost::json::serialize(boost::json::object{
      {"error", boost::json::object{{"message", message}, {"type", "invalid_request_error"}}}});
  r.attempt_log = {{status, "", 0, 5, std::nullopt}};
  return r;
}

// A configuration for run::execute against the fake: model "m" on a base URL
// nothing listens on, one worker (a fixed call order), the cache given.
inline config::Config fake_client_config(const std::filesystem::path& cache, config::CacheMode mode,
                                         int runs) {
  config::Config cfg;
  cfg.model.name = "m";
  cfg.model.base_url = "http://127.0.0.1:9/v1";
  cfg.runs = runs;
  cfg.concurrency = 1;
  cfg.cache.dir = cache;
  cfg.cache.mode = mode;
  return cfg;
}

class FakeModelClient final : public model::ModelClient {
public:
  // The reply to a call whose last user message contains `match` ("" = any);
  // the first rule that matches wins. `attempts` is what send() reports.
  void answer(std::string match, model::ApiResponse reply, int attempts = 1) {
    std::lock_guard lock(mutex_);
    rules_.push_back({std::move(match), {std::move(reply)}, attempts});
  }
  // Successive calls that match get successive replies; the last repeats.
  void answer_in_turn(std::string match, std::vector<model::ApiResponse> replies) {
    std::lock_guard lock(mutex_);
    rules_.push_back({std::move(match), std::move(replies), 1});
  }

  model::ApiResponse send(const model::ApiCall& call, int& attempts) override {
    std::lock_guard lock(mutex_);
    sent_.push_back(call);
    const std::string user = last_user(call.body);
    for (auto& r : rules_)
      if (user.find(r.match) != std::string::npos) {
        attempts = r.attempts;
        return r.replies[std::min(r.used++, r.replies.size() - 1)];
      }
    attempts = 1;
    return openai_error(404, "the fake has no answer for \"" + user + "\"");
  }

  void expect_workers(int workers) override {
    std::lock_guard lock(mutex_);
    workers_ = workers;
  }

  std::size_t calls() const {
    std::lock_guard lock(mutex_);
    return sent_.size();
  }
  std::vector<model::ApiCall> sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  int workers() const {
    std::lock_guard lock(mutex_);
    return workers_;
  }

private:
  static std::string last_user(const std::string& body) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    std::string out;
    if (ec || !v.is_object()) return out;
    if (const auto* msgs = v.as_object().if_contains("messages"); msgs != nullptr && msgs->is_array())
      for (const auto& m : msgs->as_array())
        if (m.is_object() && m.as_object().if_contains("role") && m.at("role") == "user" &&
            m.at("content").is_string())
          out = std::string(m.at("content").as_string());
    return out;
  }

  struct Rule {
    std::string match;
    std::vector<model::ApiResponse> replies;
    int attempts = 1;
    std::size_t used = 0;
  };
  mutable std::mutex mutex_;
  std::vector<Rule> rules_;
  std::vector<model::ApiCall> sent_;
  int workers_ = 0;
};

} // namespace gate::testing
