#include <gate/net/http_client.hpp>

#include <algorithm>
#include <atomic>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

#include <gate/model/stream.hpp>
#include <gate/net/limiter.hpp>
#include <gate/net/proxy.hpp>
#include <gate/net/sse.hpp>
#include <gate/net/transport.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/redact.hpp>

namespace gate::net {

namespace {

// "90 s", "0.5 s": a wait as the messages give it.
std::string seconds_text(double s) {
  std::string t = fixed(s, s == static_cast<double>(static_cast<long long>(s)) ? 0 : 1);
  return t + " s";
}

namespace http = boost::beast::http;
using detail::Exchange;
using detail::Failure;
using detail::Mono;

double jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

double ms_since(Mono::time_point t) {
  return std::chrono::duration<double, std::milli>(Mono::now() - t).count();
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// Reads one streamed answer as it arrives: SSE events into the provider's
// assembler, timed from when the request was sent.
class StreamReader {
public:
  StreamReader(const std::string& provider, Mono::time_point start)
      : start_(start), assembler_(provider, 0.0) {}

  // `watch`, when set, sees every piece of the body first.
  detail::BodySink sink(std::function<void(std::string_view piece, double ms)> watch = {}) {
    return
        [this, watch = std::move(watch)](int status, std::string_view content_type, std::string_view piece) {
          if (watch) watch(piece, ms_since(start_));
          if (status / 100 != 2 || !starts_with_ci(content_type, "text/event-stream")) return;
          active_ = true;
          for (const auto& e : decoder_.feed(piece))
            assembler_.on_event(e.event, e.data, ms_since(start_));
        };
  }
  bool active() const { return active_; }
  bool over_limit() const { return decoder_.failed(); }
  const std::string& limit_error() const { return decoder_.error(); }
  const model::StreamResult& finish() {
    bool cut = decoder_.finish();
    assembler_.finish(cut);
    return assembler_.result();
  }

private:
  Mono::time_point start_;
  SseDecoder decoder_;
  model::StreamAssembler assembler_;
  bool active_ = false;
};

// A failed stream is worth another attempt when a fresh request could
// succeed: the connection was cut or the provider was overloaded.
bool retryable_stream(const model::StreamResult& r) {
  using model::Bucket;
  return r.state == model::StreamState::incomplete || r.bucket == Bucket::rate_limit ||
         r.bucket == Bucket::server || r.bucket == Bucket::connection || r.bucket == Bucket::timeout;
}

LimiterOptions limiter_options(const config::ModelConfig& m) {
  LimiterOptions o;
  o.requests_per_min = m.requests_per_minute;
  o.tokens_per_min = m.tokens_per_minute;
  return o;
}

class HttpClient final : public model::ModelClient {
public:
  HttpClient(const config::ModelConfig& m, std::string key, const Settings& settings, const HttpOptions& o)
      : headers_(model::provider_headers(m, key)),
        transport_(m.base_url, m.ca_file, o, settings, "the API key"),
        timeout_s_(m.timeout_s > 0 ? m.timeout_s : 60.0), max_retries_(std::max(0, m.max_retries)),
        rate_limit_budget_s_(std::min(o.rate_limit_budget_s, m.rate_limit_wait_s)),
        max_server_wait_s_(std::max(0.0, m.max_retry_after_s)),
        last_unlimited_(Mono::now().time_since_epoch().count()), limiter_(limiter_options(m), clock_) {}

  void expect_workers(int workers) override { limiter_.set_max_concurrency(std::max(1, workers)); }

  model::ApiResponse send(const model::ApiCall& call, int& attempts) override {
    detail::Request req = make_request(call);
    const HttpOptions& options = transport_.options();
    // A rough budget estimate (about four bytes a token, plus the
    // completion limit); the limiter settles on the usage reported.
    const std::int64_t estimate = static_cast<std::int64_t>(call.body.size() / 4) + call.max_tokens;
    std::vector<model::AttemptRecord> log;
    double waited_ms = 0;
    int retries = 0;      // against model.max_retries: every failure but a 429
    int rate_limited = 0; // 429s retried, on their own time budget
    const auto rate_limit_end = detail::after(rate_limit_budget_s_);
    for (int attempt = 0;; ++attempt) {
      attempts = attempt + 1;

      // The limiter may hold a call for a while in a storm; the attempt's
      // own deadline starts once it is let through.
      auto budget_deadline = detail::after(
          (max_retries_ + 1) * (timeout_s_ + std::max(options.backoff_cap_s, max_server_wait_s_)) +
          rate_limit_budget_s_ + limiter_wait_cap_s);
      Acquired permit = limiter_.acquire(estimate, nullptr, budget_deadline);
      waited_ms += permit.waited_s * 1000.0;
      if (permit.result != WaitResult::ready) {
        Exchange late;
        late.failure = Failure::timeout;
        late.detail = "timeout: the shared rate limit (model.requests_per_minute / tokens_per_minute, or a "
                      "server's retry-after) held the call too long";
        log.push_back({0, model::to_string(model::Bucket::timeout), waited_ms, 0, std::nullopt});
        return finish_call(detail::to_response(std::move(late), 0), log);
      }
      Outcome out = attempt_once(call, req, attempt);
      model::ApiResponse& response = out.response;
      model::Reply reply = model::parse_response(call.provider, out.assembled ? *out.assembled : response);
      log.push_back(
          {response.status, model::to_string(reply.bucket), waited_ms, response.latency_ms, reply.usage});
      waited_ms = 0;
      std::int64_t used = 0;
      if (reply.usage)
        used = reply.usage->prompt_tokens + reply.usage->completion_tokens;
      else if (response.status / 100 == 2)
        used = estimate;
      // A wait this call refuses (above model.max_retry_after_s, below)
      // holds no other worker either: each call that is asked it ends the
      // same way, at once, rather than the pool idling for it.
      const std::optional<double> honoured =
          out.asked && *out.asked > max_server_wait_s_ ? std::nullopt : out.asked;
      limiter_.on_response(permit.permit, response.status, honoured, used);
      if (response.status != 429) last_unlimited_ = Mono::now().time_since_epoch().count();

      // A caller that gave up wants no further attempt.
      if (!out.retry || (call.abandoned && call.abandoned())) return finish_call(std::move(response), log);
      // A wait above model.max_retry_after_s would hold the run longer than
      // the user allows: the response goes back, errored with that reason.
      if (out.asked && *out.asked > max_server_wait_s_) {
        response.gave_up = "not retried: the server asked to wait " + seconds_text(*out.asked) +
                           " (Retry-After), above model.max_retry_after_s (" +
                           seconds_text(max_server_wait_s_) + ")";
        return finish_call(std::move(response), log);
      }
      double delay = 0;
      if (response.status == 429) {
        // A rate limit passes by waiting, so it does not spend the retries
        // meant for faults, only time. The server's retry-after is a lower
        // bound: "0" from every server under load would bring every worker
        // back at once, so the backoff still grows.
        delay = std::max(out.asked.value_or(0.0), backoff_delay_s(options, rate_limited, jitter()));
        if (detail::after(delay) > rate_limit_end || pool_rate_limited()) {
          response.gave_up =
              "not retried: " +
              (pool_rate_limited()
                   ? std::string("no call of the run got past a 429 for model.rate_limit_wait_s (")
                   : std::string("the next wait would pass this call's model.rate_limit_wait_s (")) +
              seconds_text(rate_limit_budget_s_) + ")";
          return finish_call(std::move(response), log);
        }
        ++rate_limited;
      } else {
        if (retries >= max_retries_) return finish_call(std::move(response), log);
        delay = out.asked ? *out.asked : backoff_delay_s(options, retries, jitter());
        ++retries;
      }
      auto slept = Mono::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      waited_ms += ms_since(slept);
    }
  }

private:
  // The longest the shared limiter may hold one call, beyond the time its
  // attempts themselves may take.
  static constexpr double limiter_wait_cap_s = 600.0;

  // No attempt of any worker got past a 429 for the whole budget.
  bool pool_rate_limited() const {
    const Mono::duration since = Mono::now().time_since_epoch() - Mono::duration(last_unlimited_.load());
    return std::chrono::duration<double>(since).count() > rate_limit_budget_s_;
  }

  struct Outcome {
    model::ApiResponse response; // a streamed answer assembled into the plain form, unless passed through
    std::optional<model::ApiResponse> assembled; // a passed-through stream, assembled: for usage and buckets
    bool retry = false;
    std::optional<double> asked; // the server's retry-after, if it sent one
  };

  // One request and its response, read as events when it streams.
  Outcome attempt_once(const model::ApiCall& call, const detail::Request& req, int attempt) const {
    auto start = Mono::now();
    StreamReader reader(call.provider, start);
    detail::BodySink sink;
    if (call.stream || call.on_body) {
      std::function<void(std::string_view, double)> watch;
      if (call.on_body)
        watch = [&call, attempt](std::string_view piece, double ms) { call.on_body(attempt, piece, ms); };
      sink = reader.sink(std::move(watch));
    }
    Exchange a = transport_.exchange(req, detail::after(timeout_s_), timeout_s_, sink,
                                     call.abandoned ? &call.abandoned : nullptr);
    double latency_ms = ms_since(start);
    Outcome out;
    bool answered = a.failure == Failure::none;
    out.retry = answered ? retryable_response(a.response.status, a.response.headers, a.response.body)
                         : a.failure == Failure::timeout || a.failure == Failure::connection;
    if (answered) out.asked = server_delay_s(a.response.headers, std::chrono::system_clock::now());
    if (!answered || !reader.active()) {
      out.response = detail::to_response(std::move(a), latency_ms);
      return out;
    }
    const model::StreamResult& sr = reader.finish();
    if (reader.over_limit()) {
      Exchange big;
      big.failure = Failure::limit;
      big.detail = redact("response exceeds limit: " + reader.limit_error());
      out.response = detail::to_response(std::move(big), latency_ms);
      out.retry = false;
      return out;
    }
    model::ApiResponse assembled = model::to_non_streaming(call.provider, sr, a.response);
    assembled.latency_ms = latency_ms;
    assembled.ttft_ms = sr.ttft_ms;
    if (!call.pass_through) {
      out.response = std::move(assembled);
      out.retry = sr.state != model::StreamState::complete && retryable_stream(sr);
      return out;
    }
    // A passed-through stream may be of an API the assembler does not know
    // (the Responses API): a missing end marker retries it only when the
    // assembler recognised the stream (it read the provider's response id).
    // A cut connection already failed the exchange.
    const bool known = !sr.id.empty();
    out.retry =
        (sr.state == model::StreamState::failed || (known && sr.state == model::StreamState::incomplete)) &&
        retryable_stream(sr);
    out.response = detail::to_response(std::move(a), latency_ms);
    out.response.ttft_ms = sr.ttft_ms;
    out.assembled = std::move(assembled);
    return out;
  }

  static model::ApiResponse finish_call(model::ApiResponse r, std::vector<model::AttemptRecord>& log) {
    r.attempt_log = std::move(log);
    return r;
  }

  detail::Request make_request(const model::ApiCall& call) const {
    const bool get = call.method == "GET";
    if (!get && call.method != "POST")
      throw_bad_input("model client: unsupported method " + redact(call.method));
    detail::Request req = transport_.make_request(get ? http::verb::get : http::verb::post, call.path);
    if (!get) req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, call.stream ? "text/event-stream" : "application/json");
    for (const auto& [name, value] : headers_)
      req.set(name, value);
    for (const auto& [name, value] : call.headers) {
      // The credentials are the client's own, never a caller's.
      if (model::is_credential_header(name))
        throw_bad_input("model client: header \"" + name + "\" cannot be passed on");
      for (unsigned char c : name + value)
        if (c < 0x20 || c == 0x7f)
          throw_bad_input("model client: header \"" + redact(name) + "\" holds a control character");
      req.set(name, value);
    }
    if (!get) {
      req.body() = call.body;
      req.prepare_payload();
    }
    return req;
  }

  std::vector<std::pair<std::string, std::string>> headers_; // the key's among them
  detail::Transport transport_;
  double timeout_s_;
  int max_retries_;
  double rate_limit_budget_s_;
  double max_server_wait_s_;              // model.max_retry_after_s
  std::atomic<Mono::rep> last_unlimited_; // when an attempt last got an answer other than a 429
  SteadyClock clock_;
  Limiter limiter_;
};

} // namespace

std::unique_ptr<model::ModelClient> make_http_client(const config::ModelConfig& m, const Environment& env,
                                                     const HttpOptions& options) {
  // model.api_key_env: null is a server that takes no key: none is sent.
  std::string key = m.api_key_env.empty() ? std::string() : env.get(m.api_key_env);
  if (key.empty() && !m.api_key_env.empty()) {
    std::string hint;
    if (is_loopback_host(parse_url(m.base_url).host))
      hint = "; for a local server that takes no key, set model.api_key_env: null";
    throw_cannot_run("no API key: environment variable " + m.api_key_env + " is not set (key alias " +
                     m.key_alias + ")" + hint);
  }
  register_secret(key);
  // A newline in the key would let it split the request's headers.
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f)
      throw_cannot_run("the API key in environment variable " + m.api_key_env + " (key alias " + m.key_alias +
                       ") contains a control character");
  return std::make_unique<HttpClient>(m, std::move(key), settings_from(env), options);
}

} // namespace gate::net
