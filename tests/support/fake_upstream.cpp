#include <tests/support/fake_upstream.hpp>

#include <tests/support/fake_answers.hpp>
#include <tests/support/fake_flavors.hpp>
#include <tests/support/fake_stream.hpp>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <gate/proxy/paced_write.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

namespace gate::testing {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::uint64_t k_request_body_limit = 64ull << 20;
// Long enough for any test's pause between calls; short enough that a
// client that vanished does not pin a session for the whole run.
constexpr auto k_idle_timeout = std::chrono::seconds(60);

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The text of a message content: a string, or an array of content blocks
// whose "text" parts are joined (both providers allow either).
std::string content_text(const boost::json::value* v) {
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->get_string());
  std::string out;
  if (v->is_array())
    for (const auto& block : v->get_array())
      if (const auto* o = block.if_object())
        if (const auto* t = o->if_contains("text"); t != nullptr && t->is_string()) {
          if (!out.empty()) out += ' ';
          out += std::string_view(t->get_string());
        }
  return out;
}

std::int64_t count_words(std::string_view s) {
  std::istringstream in{std::string(s)};
  std::int64_t n = 0;
  std::string w;
  while (in >> w)
    ++n;
  return n;
}

struct Outcome {
  bool drop = false; // close the connection without a response
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

Outcome stream_outcome(const StreamSpec& spec) {
  Outcome out;
  out.content_type = "text/event-stream";
  out.headers.emplace_back("cache-control", "no-cache");
  out.body = stream_body(spec);
  return out;
}

Outcome json_outcome(int status, std::string body) {
  Outcome out;
  out.status = status;
  out.body = std::move(body);
  return out;
}

// A rule's answer in its shape (Rule::shape), plain or streamed.
Outcome shaped_outcome(StreamSpec spec, const std::string& shape, bool streamed, const std::string& id_prefix,
                       std::uint64_t n, const std::string& answer, std::int64_t prompt,
                       std::int64_t completion) {
  spec.id = id_prefix + std::to_string(n);
  spec.answer = answer;
  spec.prompt = prompt;
  spec.completion = completion;
  if (!streamed) return json_outcome(200, shaped_body(spec, shape));
  Outcome out = stream_outcome(spec);
  out.body = shaped_stream(spec, shape);
  return out;
}

} // namespace

namespace {

enum class Api { chat, anthropic, responses };

// The upstream's behaviour and records, apart from the sockets: what a
// session asks for each request it reads.
struct Service {
  explicit Service(Script s)
      : script(std::move(s)), fault_used(script.faults.size(), 0), storm_start(script.faults.size()),
        draws(script.seed) {}

  Script script;
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> connections{0};

  mutable std::mutex mutex; // guards the members below
  std::vector<RequestLog> log;
  std::map<std::string, std::uint64_t> answered; // request body → times answered
  std::vector<int> fault_used;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> storm_start; // per fault with during_ms
  std::uint64_t completions = 0;
  std::mt19937_64 draws; // for faults with a probability

  Outcome handle(const http::request<http::string_body>& req);
  Outcome complete(Api api, const boost::json::object& body, const std::string& raw);
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One client connection, plain (beast::tcp_stream) or TLS (TlsStream).
template <class Stream> class Session : public std::enable_shared_from_this<Session<Stream>> {
public:
  template <class... Args>
  Session(Service& service, Args&&... args) : stream_(std::forward<Args>(args)...), service_(service) {}

  void start() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      beast::get_lowest_layer(stream_).expires_after(k_idle_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->close();
                                self->read();
                              });
    } else {
      read();
    }
  }

private:
  void read() {
    parser_.emplace();
    parser_->body_limit(k_request_body_limit);
    beast::get_lowest_layer(stream_).expires_after(k_idle_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return close();
    auto req = parser_->release();
    Outcome out = service_.handle(req);
    if (out.drop) return close();
    // A script header Beast refuses (a value over its field limit) must not
    // take the test process down with an exception on a server thread.
    try {
      respond(req, std::move(out));
    } catch (const std::exception&) {
      close();
    }
  }

  void respond(const http::request<http::string_body>& req, Outcome out) {
    res_ = {};
    res_.version(11);
    res_.result(static_cast<unsigned>(out.status));
    res_.set(http::field::server, "gate-fake-upstream");
    res_.set(http::field::content_type, out.content_type);
    for (const auto& [k, v] : out.headers)
      res_.set(k, v);
    res_.body() = std::move(out.body);
    res_.keep_alive(req.keep_alive());
    res_.prepare_payload();
    // The proxy's paced writer (timers, not sleeps: other connections on
    // this thread keep going) adds the latency and the event gaps.
    const Script& script = service_.script;
    std::vector<gate::proxy::Step> steps;
    if (script.event_gap_ms > 0 && out.content_type == "text/event-stream") {
      double at = script.latency_ms;
      for (std::size_t end : gate::proxy::event_ends(res_.body())) {
        steps.push_back({end, at});
        at += script.event_gap_ms;
      }
    }
    if (steps.empty() || steps.back().end < res_.body().size())
      steps.push_back({res_.body().size(), steps.empty() ? script.latency_ms : steps.back().at_ms});
    if (steps.size() == 1 && steps[0].at_ms <= 0) steps.clear();
    beast::get_lowest_layer(stream_).expires_after(k_idle_timeout);
    const bool keep = res_.keep_alive();
    // Streams are paced event by event over plain HTTP only (event_gap_ms);
    // a TLS stream comes whole, which keeps this file's compile time down.
    constexpr bool chunked = !std::is_same_v<Stream, TlsStream>;
    std::make_shared<gate::proxy::PacedWrite<Stream, chunked>>(
        stream_, std::move(res_), std::move(steps), std::chrono::steady_clock::now(),
        [self = this->shared_from_this(), keep](beast::error_code ec) {
          if (ec || !keep) return self->close();
          self->read();
        })
        ->run();
  }

  // Without TLS close_notify: clients must cope with peers that do this.
  void close() {
    beast::error_code ignored;
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  Service& service_;
};

Outcome Service::handle(const http::request<http::string_body>& req) {
  RequestLog entry;
  entry.method = std::string(req.method_string());
  entry.target = std::string(req.target());
  entry.body = req.body();
  for (const auto& f : req) {
    std::string name(f.name_string());
    for (char& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    entry.headers[name] = std::string(f.value());
  }
  {
    std::lock_guard lock(mutex);
    log.push_back(std::move(entry));
  }
  ++requests;

  std::string_view target = req.target();
  const std::size_t mark = target.find('?');
  const std::string_view query =
      mark == std::string_view::npos ? std::string_view() : target.substr(mark + 1);
  target = target.substr(0, mark);
  if (!script.azure_api_version.empty()) {
    auto key = req.find("api-key");
    if (auto refusal =
            azure_refusal(script, target, query, key == req.end() ? "" : std::string(key->value())))
      return json_outcome(refusal->status, std::move(refusal->body));
  }
  if (!script.prefix.empty()) {
    bool under = target.substr(0, script.prefix.size()) == script.prefix;
    std::string_view route = under ? target.substr(script.prefix.size()) : std::string_view();
    if (route != "/chat/completions" && route != "/v1/messages" && route != "/models" &&
        route != "/v1/models" && route != "/responses")
      return json_outcome(404, error_body(script, 404, "no route for " + std::string(target)));
  }
  if (req.method() == http::verb::get && ends_with(target, "/models")) {
    boost::json::array data;
    for (const auto& id : script.models.empty() ? std::vector<std::string>{"fake-model"} : script.models)
      data.push_back(
          boost::json::object{{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "gate"}});
    boost::json::object list{{"object", "list"}, {"data", std::move(data)}};
    return json_outcome(200, boost::json::serialize(list));
  }
  bool openai = ends_with(target, "/chat/completions");
  bool anthropic = ends_with(target, "/v1/messages");
  bool responses = ends_with(target, "/responses");
  if (!openai && !anthropic && !responses)
    return json_outcome(404, error_body(script, 404, "no route for " + std::string(target)));
  if (req.method() != http::verb::post) return json_outcome(405, error_body(script, 405, "use POST"));

  boost::system::error_code ec;
  boost::json::value body = boost::json::parse(req.body(), ec);
  if (ec || !body.is_object())
    return json_outcome(400, error_body(script, 400, "the body is not a JSON object"));
  return complete(anthropic   ? Api::anthropic
                  : responses ? Api::responses
                              : Api::chat,
                  body.get_object(), req.body());
}

Outcome Service::complete(Api api, const boost::json::object& body, const std::string& raw) {
  const bool anthropic = api == Api::anthropic;
  std::string model;
  if (const auto* m = body.if_contains("model"); m != nullptr && m->is_string()) model = m->get_string();
  std::string last_user;
  std::int64_t prompt_words = 0;
  if (anthropic) prompt_words += count_words(content_text(body.if_contains("system")));
  if (api == Api::responses) prompt_words += count_words(content_text(body.if_contains("instructions")));
  const auto* msgs = body.if_contains(api == Api::responses ? "input" : "messages");
  if (msgs != nullptr && msgs->is_string()) {
    last_user = content_text(msgs); // the Responses API's one-string input
    prompt_words += count_words(last_user);
  } else if (msgs != nullptr && msgs->is_array()) {
    for (const auto& m : msgs->get_array()) {
      const auto* o = m.if_object();
      if (o == nullptr) continue;
      std::string text = content_text(o->if_contains("content"));
      prompt_words += count_words(text);
      if (const auto* role = o->if_contains("role"); role != nullptr && role->is_string() && *role == "user")
        last_user = text;
    }
  }

  const auto* stream_flag = body.if_contains("stream");
  StreamSpec spec;
  spec.anthropic = anthropic;
  spec.responses = api == Api::responses;
  spec.model = model;
  bool streamed = stream_flag != nullptr && stream_flag->is_bool() && stream_flag->get_bool();
  if (const auto* so = body.if_contains("stream_options"); so != nullptr && so->is_object())
    if (const auto* iu = so->get_object().if_contains("include_usage"); iu != nullptr && iu->is_bool())
      spec.include_usage = iu->get_bool() && !script.no_usage;
  spec.azure = !script.azure_api_version.empty();

  // Azure's v1 API names the deployment in the body (its deployment URLs
  // in the path, where azure_refusal checked it).
  if (!script.models.empty() &&
      std::find(script.models.begin(), script.models.end(), model) == script.models.end()) {
    if (!script.azure_api_version.empty())
      return json_outcome(404, error_body(script, 404, "The API deployment for this resource does not exist.",
                                          "DeploymentNotFound"));
    return json_outcome(
        404,
        error_body(script, 404, "The model `" + model + "` does not exist or you do not have access to it.",
                   "model_not_found"));
  }
  if (auto refusal = provider_refusal(script,
                                      anthropic        ? Shape::anthropic
                                      : spec.responses ? Shape::responses
                                                       : Shape::chat,
                                      body))
    return json_outcome(refusal->status, std::move(refusal->body));
  if (script.reject_seed && body.contains("seed"))
    return json_outcome(400, error_body(script, 400, "Unrecognized request argument supplied: seed"));

  std::lock_guard lock(mutex);
  for (std::size_t i = 0; i < script.faults.size(); ++i) {
    const Fault& f = script.faults[i];
    if (last_user.find(f.match) == std::string::npos) continue;
    if (!f.stream.empty() && !streamed) continue;
    if (f.probability > 0) {
      if (std::uniform_real_distribution<double>(0.0, 1.0)(draws) >= f.probability) continue;
    } else if (f.during_ms > 0) {
      auto now = std::chrono::steady_clock::now();
      if (!storm_start[i]) storm_start[i] = now;
      if (std::chrono::duration<double, std::milli>(now - *storm_start[i]).count() > f.during_ms) continue;
    } else if (fault_used[i] >= f.times) {
      continue;
    }
    ++fault_used[i];
    if (!f.stream.empty()) {
      spec.id = "fault";
      spec.answer = "partial answer ";
      spec.ending = f.stream;
      spec.error_status = f.status;
      return stream_outcome(spec);
    }
    Outcome out;
    out.drop = f.close_without_response;
    out.status = f.status;
    out.headers = f.headers;
    out.body = f.body.empty()
                   ? error_body(script, f.status, "fake upstream fault: HTTP " + std::to_string(f.status))
                   : f.body;
    return out;
  }

  std::uint64_t occurrence = answered[raw]++;
  std::string answer = "echo: " + last_user;
  const Rule* matched = nullptr;
  for (const auto& rule : script.rules) {
    if (last_user.find(rule.match) == std::string::npos) continue;
    if (!rule.body.empty() && raw.find(rule.body) == std::string::npos) continue;
    answer = rule.answers[occurrence % rule.answers.size()];
    matched = &rule;
    break;
  }
  std::uint64_t n = ++completions;
  std::int64_t prompt = prompt_words + 3;
  std::int64_t completion = count_words(answer) + 1;
  if (matched != nullptr && !matched->shape.empty())
    return shaped_outcome(spec, matched->shape, streamed,
                          anthropic        ? "msg_fake_"
                          : spec.responses ? "resp_fake_"
                                           : "chatcmpl-fake-",
                          n, answer, prompt, completion);
  if (streamed) {
    spec.id = (anthropic        ? "msg_fake_"
               : spec.responses ? "resp_fake_"
                                : "chatcmpl-fake-") +
              std::to_string(n);
    spec.answer = answer;
    spec.prompt = prompt;
    spec.completion = completion;
    return stream_outcome(spec);
  }

  boost::json::object res;
  if (spec.responses) {
    spec.id = "resp_fake_" + std::to_string(n);
    spec.answer = answer;
    spec.prompt = prompt;
    spec.completion = completion;
    res = responses_object(spec);
  } else if (anthropic) {
    res = {{"id", "msg_fake_" + std::to_string(n)},
           {"type", "message"},
           {"role", "assistant"},
           {"model", model},
           {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", answer}}}},
           {"stop_reason", "end_turn"},
           {"stop_sequence", nullptr},
           {"usage", boost::json::object{{"input_tokens", prompt}, {"output_tokens", completion}}}};
    if (script.cached_prompt_tokens > 0) {
      auto& usage = res["usage"].as_object();
      const std::int64_t read = std::min(script.cached_prompt_tokens, prompt);
      usage["input_tokens"] = prompt - read;
      usage["cache_read_input_tokens"] = read;
      usage["cache_creation_input_tokens"] = 0;
    }
  } else {
    boost::json::object message{{"role", "assistant"}, {"content", answer}};
    std::string finish = "stop";
    // A filter that stopped the answer before its first word leaves no content.
    if (matched != nullptr && matched->finish_reason == "content_filter" && answer.empty())
      message["content"] = nullptr;
    if (matched != nullptr && !matched->tool_calls.empty()) {
      boost::json::array calls;
      for (const auto& [name, arguments] : matched->tool_calls)
        calls.push_back({{"id", "call_fake_" + std::to_string(calls.size())},
                         {"type", "function"},
                         {"function", {{"name", name}, {"arguments", arguments}}}});
      message["tool_calls"] = std::move(calls);
      finish = "tool_calls";
    }
    if (matched != nullptr && !matched->finish_reason.empty()) finish = matched->finish_reason;
    boost::json::object choice{{"index", 0}, {"message", std::move(message)}, {"finish_reason", finish}};
    res = {{"id", "chatcmpl-fake-" + std::to_string(n)},
           {"object", "chat.completion"},
           {"model", model},
           {"choices", boost::json::array{std::move(choice)}},
           {"usage", boost::json::object{{"prompt_tokens", prompt},
                                         {"completion_tokens", completion},
                                         {"total_tokens", prompt + completion}}}};
    if (spec.azure) {
      const boost::json::object filtered{{"filtered", finish == "content_filter"}, {"severity", "safe"}};
      res["prompt_filter_results"] = boost::json::array{
          boost::json::object{{"prompt_index", 0}, {"content_filter_results", boost::json::object{}}}};
      res["choices"].as_array()[0].as_object()["content_filter_results"] =
          boost::json::object{{"hate", filtered}, {"violence", filtered}};
    }
  }
  if (script.cached_prompt_tokens > 0 && !anthropic && !spec.responses)
    res["usage"].as_object()["prompt_tokens_details"] =
        boost::json::object{{"cached_tokens", std::min(script.cached_prompt_tokens, prompt)}};
  if (script.no_usage) res.erase("usage");
  return json_outcome(200, boost::json::serialize(res));
}

} // namespace

struct FakeUpstream::Impl {
  explicit Impl(Script s) : service(std::move(s)) {}

  void accept() {
    acceptor->async_accept(asio::make_strand(*ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) return; // the acceptor was closed
      ++service.connections;
      if (tls)
        std::make_shared<Session<TlsStream>>(service, std::move(socket), *tls)->start();
      else
        std::make_shared<Session<beast::tcp_stream>>(service, std::move(socket))->start();
      accept();
    });
  }

  Service service;
  std::shared_ptr<asio::ssl::context> tls; // null: plain HTTP
  std::string required_sni;                // read by the SNI callback while serving
  std::unique_ptr<asio::io_context> ioc;   // before the acceptor: destroyed after it
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  unsigned short port = 0;
};

FakeUpstream::FakeUpstream(Script script) : impl_(std::make_unique<Impl>(std::move(script))) {}

FakeUpstream::~FakeUpstream() { stop(); }

void FakeUpstream::start(unsigned short port, int threads) {
  stop();
  impl_->tls.reset();
  listen(port, threads);
}

void FakeUpstream::listen(unsigned short port, int threads) {
  impl_->ioc = std::make_unique<asio::io_context>(std::max(1, threads));
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->ioc);
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
  beast::error_code ec;
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(endpoint, ec);
  if (!ec) impl_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl_->acceptor.reset();
    impl_->ioc.reset();
    throw_cannot_run("fake upstream: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                     ec.message());
  }
  impl_->port = impl_->acceptor->local_endpoint().port();
  impl_->accept();
  for (int i = 0; i < std::max(1, threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc->run(); });
}

void FakeUpstream::stop() {
  if (!impl_->ioc) return;
  impl_->ioc->stop();
  for (auto& t : impl_->threads)
    t.join();
  impl_->threads.clear();
  impl_->acceptor.reset();
  // Destroying the io_context destroys the pending handlers, and with them
  // the sessions: every client connection is closed now, not at exit.
  impl_->ioc.reset();
}

unsigned short FakeUpstream::port() const { return impl_->port; }

std::string FakeUpstream::base_url() const {
  if (impl_->tls) return "https://localhost:" + std::to_string(impl_->port) + "/v1";
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

namespace {

// The virtual-host check: a handshake without SNI, or for another name,
// fails with an unrecognized_name alert.
int require_sni(SSL* ssl, int* alert, void* arg) {
  const auto* want = static_cast<const std::string*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name != nullptr && *want == name) return SSL_TLSEXT_ERR_OK;
  *alert = SSL_AD_UNRECOGNIZED_NAME;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

} // namespace

void FakeUpstream::start_tls(unsigned short port, int threads, const std::string& cert_pem,
                             const std::string& key_pem, const std::string& required_sni) {
  stop();
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  beast::error_code ec;
  ctx->use_certificate_chain(asio::buffer(cert_pem), ec);
  if (!ec) ctx->use_private_key(asio::buffer(key_pem), asio::ssl::context::pem, ec);
  if (ec) throw_cannot_run("fake upstream: cannot use the TLS certificate or key: " + ec.message());
  impl_->required_sni = required_sni;
  if (!required_sni.empty()) {
    SSL_CTX_set_tlsext_servername_callback(ctx->native_handle(), require_sni);
    SSL_CTX_set_tlsext_servername_arg(ctx->native_handle(), &impl_->required_sni);
  }
  impl_->tls = std::move(ctx);
  try {
    listen(port, threads);
  } catch (...) {
    impl_->tls.reset();
    throw;
  }
}

std::uint64_t FakeUpstream::requests() const { return impl_->service.requests; }

std::uint64_t FakeUpstream::connections() const { return impl_->service.connections; }

std::vector<RequestLog> FakeUpstream::log() const {
  std::lock_guard lock(impl_->service.mutex);
  return impl_->service.log;
}

} // namespace gate::testing
