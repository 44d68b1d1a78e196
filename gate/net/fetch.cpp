#include <gate/net/fetch.hpp>

#include <boost/beast/http/verb.hpp>

#include <gate/net/transport.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

namespace gate::net {

namespace {

namespace http = boost::beast::http;

// "scheme://authority/rest?query" → the origin (for parse_url) and the
// request target.
std::pair<std::string, std::string> split_url(const std::string& url) {
  auto sep = url.find("://");
  std::size_t path_at = sep == std::string::npos ? std::string::npos : url.find_first_of("/?#", sep + 3);
  std::string origin = url.substr(0, path_at);
  std::string target = path_at == std::string::npos ? "/" : url.substr(path_at);
  if (target.front() == '?') target.insert(0, "/");
  if (target.find('#') != std::string::npos)
    throw_bad_input("fetch URL \"" + redact(url) + "\": a fragment cannot be sent");
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f)
      throw_bad_input("fetch URL \"" + redact(url) + "\": the path and query must be percent-encoded");
  return {origin, target};
}

// One exchange of `req` with the headers and body of a request added.
model::ApiResponse send(const detail::Transport& transport, detail::Request req, const Headers& headers,
                        const std::string& body, double timeout_s, const detail::BodySink& sink,
                        const std::function<bool()>* abandoned) {
  for (const auto& [name, value] : headers) {
    for (unsigned char c : name + value)
      if (c < 0x20 || c == 0x7f)
        throw_bad_input("fetch: header \"" + redact(name) + "\" holds a control character");
    req.set(name, value);
  }
  const http::verb method = req.method();
  if (!body.empty() || method == http::verb::post || method == http::verb::put ||
      method == http::verb::patch) {
    req.body() = body;
    req.prepare_payload();
  }
  auto start = detail::Mono::now();
  detail::Exchange e = transport.exchange(req, detail::after(timeout_s), timeout_s, sink, abandoned);
  double latency_ms = std::chrono::duration<double, std::milli>(detail::Mono::now() - start).count();
  return detail::to_response(std::move(e), latency_ms);
}

http::verb verb_of(const std::string& method) {
  http::verb v = http::string_to_verb(method);
  if (v == http::verb::unknown || v == http::verb::connect)
    throw_bad_input("fetch: unsupported HTTP method \"" + redact(method) + "\"");
  return v;
}

} // namespace

model::ApiResponse fetch(const FetchRequest& r, const Environment& env) {
  http::verb method = verb_of(r.method);
  auto [origin, target] = split_url(r.url);
  HttpOptions options;
  double timeout_s = r.timeout_s > 0 ? r.timeout_s : 30.0;
  detail::Transport transport(origin, r.ca_file, options, settings_from(env), "the request");
  // The target already holds the whole path: parse_url kept no prefix.
  detail::BodySink sink;
  if (r.on_body) sink = [&r](int, std::string_view, std::string_view piece) { r.on_body(piece); };
  return send(transport, transport.make_request(method, target), r.headers, r.body, timeout_s, sink,
              r.abandoned ? &r.abandoned : nullptr);
}

Origin::Origin(const std::string& base_url, const Environment& env, Timeouts timeouts,
               const std::string& what_travels)
    : timeouts_(timeouts) {
  HttpOptions options;
  options.connect_timeout_s = timeouts.connect_s;
  options.handshake_timeout_s = timeouts.connect_s;
  options.read_idle_timeout_s = timeouts.total_s;
  transport_ = std::make_unique<detail::Transport>(base_url, "", options, settings_from(env), what_travels);
}

Origin::~Origin() = default;

model::ApiResponse Origin::request(const std::string& method, const std::string& path, const Headers& headers,
                                   const std::string& body) const {
  return send(*transport_, transport_->make_request(verb_of(method), path), headers, body, timeouts_.total_s,
              {}, nullptr);
}

} // namespace gate::net
