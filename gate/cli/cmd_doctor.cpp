// `gate doctor`: what stands between this machine and one completion, one
// line per check, in the order a call meets them.
#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json/parse.hpp>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/cli/remote_cache.hpp>
#include <gate/model/api.hpp>
#include <gate/net/fetch.hpp>
#include <gate/net/http_client.hpp>
#include <gate/net/proxy.hpp>
#include <gate/net/settings.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr double k_step_timeout_s = 10;
constexpr std::size_t k_models_shown = 20;

// One verdict line: "ok", "warn", "FAIL" or "skip", the check, what was seen.
void line(const char* verdict, const std::string& check, const std::string& detail) {
  std::string v = verdict;
  v.resize(6, ' ');
  std::string c = check;
  c.resize(std::max<std::size_t>(c.size(), 11), ' ');
  std::cout << v << c << terminal_safe(detail) << "\n";
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Text that people paste instead of a key.
bool looks_like_placeholder(const std::string& key) {
  std::string k = lower(key);
  for (const char* p : {"your_api_key", "your-api-key", "yourapikey", "your_key", "your-key", "api_key_here",
                        "<", "xxxx", "changeme", "placeholder", "replace", "insert", "dummy", "example"})
    if (k.find(p) != std::string::npos) return true;
  return k == "sk-..." || k == "sk-" || k == "key" || k == "test" || k.size() < 8;
}

struct KeyState {
  bool present = false;
};

KeyState check_key(const config::ModelConfig& m, const net::Url& url) {
  if (m.api_key_env.empty()) {
    line("ok", "key", "none needed: model.api_key_env is null, so no key is sent");
    return {true};
  }
  const std::string key = process_env().get(m.api_key_env);
  std::string where = "$" + m.api_key_env + " (key alias " + m.key_alias + ")";
  if (key.empty()) {
    line("FAIL", "key", where + " is not set; export it, or name another variable in model.api_key_env");
    if (net::is_loopback_host(url.host))
      line("hint", "key", "a local server that takes no key needs none: set model.api_key_env: null");
    return {};
  }
  register_secret(key);
  std::string length = std::to_string(key.size()) + " characters";
  bool space = std::any_of(key.begin(), key.end(), [](unsigned char c) { return std::isspace(c) != 0; });
  if (space)
    line("FAIL", "key",
         where + " is set (" + length + ") but holds whitespace or a line break; copy it again");
  else if (looks_like_placeholder(key))
    line("warn", "key", where + " is set (" + length + ") but looks like a placeholder, not a real key");
  else
    line("ok", "key", where + " is set (" + length + ")");
  return {!space};
}

void check_proxy(const net::Url& url) {
  auto proxy = net::proxy_for(url.scheme, url.host, net::settings_from(process_env()));
  if (proxy) {
    line("ok", "proxy",
         url.scheme + " to " + url.host + " goes through " + proxy->host + ":" + proxy->port + " (from " +
             proxy->setting + (proxy->authorization.empty() ? "" : ", with credentials") + ")");
    return;
  }
  std::string set;
  for (const char* v : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"})
    if (!process_env().get(v).empty()) set += std::string(set.empty() ? "" : ", ") + v;
  if (set.empty())
    line("ok", "proxy", "none set; direct connection");
  else
    line("ok", "proxy", "not used for " + url.host + " (loopback or NO_PROXY), although " + set + " is set");
}

// DNS then TCP to the host a connection really goes to (the proxy's, when
// one is in effect). False when either failed.
bool check_dns_tcp(const net::Url& url) {
  auto proxy = net::proxy_for(url.scheme, url.host, net::settings_from(process_env()));
  std::string host = proxy ? proxy->host : url.host;
  std::string port = proxy ? proxy->port : url.port;
  std::string bare = host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  boost::system::error_code ec = asio::error::would_block;
  tcp::resolver::results_type found;
  resolver.async_resolve(bare, port, [&](boost::system::error_code e, tcp::resolver::results_type r) {
    ec = e;
    found = std::move(r);
  });
  ioc.run_for(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(k_step_timeout_s)));
  if (ec == asio::error::would_block) {
    line("FAIL", "dns", "resolving " + host + " took longer than 10 s");
    return false;
  }
  if (ec || found.empty()) {
    line("FAIL", "dns", "cannot resolve " + host + ": " + ec.message());
    return false;
  }
  std::string first = found.begin()->endpoint().address().to_string();
  line("ok", "dns",
       host + " → " + first + (found.size() > 1 ? " (+" + std::to_string(found.size() - 1) + " more)" : ""));

  tcp::socket socket(ioc);
  ec = asio::error::would_block;
  auto start = std::chrono::steady_clock::now();
  asio::async_connect(socket, found, [&](boost::system::error_code e, const tcp::endpoint&) { ec = e; });
  ioc.restart();
  ioc.run_for(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(k_step_timeout_s)));
  if (ec == asio::error::would_block) {
    line("FAIL", "tcp", "connecting to " + host + ":" + port + " took longer than 10 s (a firewall?)");
    return false;
  }
  if (ec) {
    // Nothing listens on a local port: the server is not started (yet).
    const bool refused = ec == asio::error::connection_refused && net::is_loopback_host(host);
    line("FAIL", "tcp",
         "cannot connect to " + host + ":" + port + ": " + ec.message() +
             (refused ? "; is the server running? (ollama serve, vllm serve, llama-server)" : ""));
    return false;
  }
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  line("ok", "tcp",
       "connected to " + host + ":" + port + " in " + std::to_string(static_cast<long>(ms)) + " ms");
  return true;
}

// GET {base}/models: the first request that needs TLS, so it is the TLS
// check too. Returns the response (status 0 when there was none).
model::ApiResponse get_models(const config::ModelConfig& m, bool with_key) {
  net::FetchRequest r;
  r.url = m.base_url;
  while (!r.url.empty() && r.url.back() == '/')
    r.url.pop_back();
  r.url += m.provider == "anthropic" ? "/v1/models" : "/models";
  if (!m.api_version.empty()) r.url += "?api-version=" + m.api_version;
  const std::string key = m.api_key_env.empty() ? std::string() : process_env().get(m.api_key_env);
  if (with_key) r.headers = model::provider_headers(m, key);
  r.timeout_s = std::min(m.timeout_s, k_step_timeout_s);
  r.ca_file = m.ca_file.string();
  return net::fetch(r, process_env());
}

bool check_tls(const net::Url& url, const model::ApiResponse& models) {
  const char* check = url.scheme == "https" ? "tls" : "http";
  if (models.status == 0) {
    line("FAIL", check, models.body);
    return false;
  }
  if (url.scheme == "https")
    line("ok", check, "certificate for " + url.host + " verified; the server answers HTTP");
  else
    line("ok", check, "plain http to " + url.host + " (no TLS); the server answers HTTP");
  return true;
}

std::vector<std::string> model_ids(const model::ApiResponse& models) {
  std::vector<std::string> out;
  if (models.status != 200) return out;
  boost::system::error_code ec;
  auto v = boost::json::parse(models.body, ec);
  const auto* data = !ec && v.is_object() ? v.get_object().if_contains("data") : nullptr;
  if (data == nullptr || !data->is_array()) return out;
  for (const auto& item : data->get_array())
    if (const auto* o = item.if_object())
      if (const auto* id = o->if_contains("id"); id != nullptr && id->is_string())
        out.emplace_back(id->get_string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Completion {
  model::ApiResponse response;
  model::Reply reply;
};

Completion complete(config::ModelConfig m) {
  m.max_retries = 0;
  m.max_tokens = 8;
  m.temperature = 0.0;
  m.timeout_s = std::min(m.timeout_s, 30.0);
  auto client = net::make_http_client(m, process_env());
  model::ApiCall call{model::dialect(m), model::endpoint_path(m),
                      model::build_request(m, "", {{"user", "Reply with the single word OK."}})};
  call.max_tokens = 8;
  int attempts = 0;
  Completion c;
  c.response = client->send(call, attempts);
  c.reply = model::parse_response(call.provider, c.response);
  return c;
}

// The base URL with "/v1" added, or removed when it ends so.
std::string other_base_url(const std::string& base) {
  std::string b = base;
  while (!b.empty() && b.back() == '/')
    b.pop_back();
  if (b.size() >= 3 && b.compare(b.size() - 3, 3, "/v1") == 0) return b.substr(0, b.size() - 3);
  return b + "/v1";
}

bool ends_with_path(std::string base, std::string_view tail) {
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  return base.ends_with(tail);
}

// Azure's two URL forms: the v1 API ({endpoint}/openai/v1, no api-version)
// and deployment URLs ({endpoint}/openai, with one). A base URL of the one
// with the settings of the other gets 404s that name neither.
void check_azure_form(const config::ModelConfig& m) {
  if (m.provider != "azure") return;
  const bool v1 = ends_with_path(m.base_url, "/openai/v1");
  if (m.api_version.empty()) {
    line(v1 ? "ok" : "warn", "azure",
         v1 ? "the v1 API: " + m.base_url + model::endpoint_path(m) + " with deployment \"" + m.name +
                  "\" (model.name) in the body"
            : "no model.api_version, so the v1 API, whose base URL ends in /openai/v1; " + m.base_url +
                  " does not");
    return;
  }
  line(v1 || !ends_with_path(m.base_url, "/openai") ? "warn" : "ok", "azure",
       "deployment URL " + m.base_url + model::endpoint_path(m) +
           (v1 ? "; with model.api_version the base URL is {endpoint}/openai, without /v1"
            : !ends_with_path(m.base_url, "/openai") ? "; the base URL should end in /openai"
                                                     : ""));
}

void explain_azure_not_found(const config::ModelConfig& m, const Completion& c) {
  const std::string message = lower(c.reply.error);
  const std::string where = m.api_version.empty()
                                ? " (the v1 API at " + m.base_url + ")"
                                : " at " + m.base_url + " with api-version " + m.api_version;
  if (message.find("deployment") != std::string::npos) {
    line("FAIL", "deployment",
         "Azure has no deployment \"" + m.name + "\" (model.name)" + where +
             "; model.name is the deployment's name in the Azure portal, not the model's");
    return;
  }
  line("hint", "version",
       "the path was not found" + where +
           (m.api_version.empty() ? "; check model.base_url ends in /openai/v1"
                                  : "; check model.api_version is one Azure serves (e.g. 2024-10-21) and "
                                    "model.base_url ends in /openai"));
}

void explain_not_found(const config::ModelConfig& m, const Completion& c, const model::ApiResponse& models) {
  if (m.provider == "azure") return explain_azure_not_found(m, c);
  std::string message = lower(c.reply.error);
  if (message.find("model") != std::string::npos) {
    line("FAIL", "model", "the endpoint does not know model \"" + m.name + "\" (model.name)");
    auto ids = model_ids(models);
    if (ids.empty()) {
      line("skip", "models",
           "the endpoint lists no models at " + m.base_url + "/models (HTTP " +
               std::to_string(models.status) + ")");
      return;
    }
    std::string list;
    for (std::size_t i = 0; i < ids.size() && i < k_models_shown; ++i)
      list += (i == 0 ? "" : ", ") + ids[i];
    if (ids.size() > k_models_shown)
      list += ", … and " + std::to_string(ids.size() - k_models_shown) + " more";
    line("info", "models", "the endpoint offers: " + list);
    return;
  }
  config::ModelConfig other = m;
  other.base_url = other_base_url(m.base_url);
  Completion retry = complete(other);
  if (retry.reply.bucket == model::Bucket::none)
    line("hint", "base_url",
         "the path was not found under " + m.base_url + ", but " + other.base_url +
             " works: set model.base_url: " + other.base_url);
  else
    line("hint", "base_url",
         "the path was not found under " + m.base_url + " nor under " + other.base_url + " (HTTP " +
             std::to_string(retry.response.status) + "); check model.base_url and model.provider");
}

// cache.remote: a GET of an entry no run has (key 0…0) must be answered,
// a 404 normally; a refusal, a 401/403 or a timeout is what a run would
// meet and turn the remote off for. Writing is not tried.
bool check_remote_cache(const config::CacheConfig& c) {
  if (c.remote.empty()) return true;
  std::shared_ptr<cache::Remote> remote;
  try {
    remote = open_remote(c, process_env());
  } catch (const Error& e) {
    line("FAIL", "cache", std::string("cache.remote: ") + e.what());
    return false;
  }
  remote->get(std::string(64, '0'));
  if (remote->counts().failures == 0) {
    line("ok", "cache", "cache.remote " + remote->where() + " answers a GET (writing is not tried)");
    return true;
  }
  line("FAIL", "cache", "cache.remote " + remote->failure() + "; runs go on without it");
  return false;
}

} // namespace

int cmd_doctor(const Args& args) {
  po::options_description desc("gate doctor options");
  desc.add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"), "the gate.yaml to read");
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate doctor [--config gate.yaml]")) return 0;
  config::Config cfg = load_config(vm["config"].as<std::string>(), {});
  const config::ModelConfig& m = cfg.model;
  std::cout << "gate doctor: provider " << m.provider << " (" << model::dialect(m) << " API), model "
            << terminal_safe(m.name) << ", base URL " << terminal_safe(m.base_url) << "\n";
  net::Url url = net::parse_url(m.base_url);
  const bool remote_ok = check_remote_cache(cfg.cache);

  KeyState key = check_key(m, url);
  check_azure_form(m);
  check_proxy(url);
  if (!check_dns_tcp(url)) {
    line("skip", "completion", "no connection");
    return static_cast<int>(Exit::cannot_run);
  }
  model::ApiResponse models = get_models(m, key.present);
  if (!check_tls(url, models) || !key.present) {
    line("skip", "completion", key.present ? "no HTTP answer" : "no usable key");
    return static_cast<int>(Exit::cannot_run);
  }

  Completion c;
  try {
    c = complete(m);
  } catch (const Error& e) {
    line("FAIL", "completion", e.what());
    return static_cast<int>(Exit::cannot_run);
  }
  const model::Reply& r = c.reply;
  std::string took = " in " + std::to_string(static_cast<long>(c.response.latency_ms)) + " ms";
  if (r.bucket == model::Bucket::none) {
    std::string usage = r.usage ? ", " + std::to_string(r.usage->prompt_tokens) + "+" +
                                      std::to_string(r.usage->completion_tokens) + " tokens"
                                : ", no usage reported";
    line("ok", "completion",
         "HTTP " + std::to_string(c.response.status) + took + ": \"" + r.text + "\"" + usage);
    return remote_ok ? 0 : static_cast<int>(Exit::cannot_run);
  }
  line("FAIL", "completion", model::to_string(r.bucket) + took + ": " + r.error);
  if (r.bucket == model::Bucket::auth && m.api_key_env.empty())
    line("hint", "key", "the server wants a key: set model.api_key_env to the variable that holds it");
  else if (r.bucket == model::Bucket::auth)
    line("hint", "key",
         "the key in $" + m.api_key_env + " (key alias " + m.key_alias +
             ") was refused; check it belongs to " + url.host + " and is still active");
  if (r.bucket == model::Bucket::not_found) explain_not_found(m, c, models);
  // Local and compatible servers often refuse OpenAI's sampling seed.
  if (r.bucket == model::Bucket::bad_response && m.seed && lower(r.error).find("seed") != std::string::npos)
    line("hint", "seed", "the server refused model.seed; set model.seed: null and gate sends none");
  return static_cast<int>(Exit::cannot_run);
}

} // namespace gate::cli
