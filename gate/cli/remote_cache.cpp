#include <gate/cli/remote_cache.hpp>

#include <algorithm>

#include <gate/net/fetch.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

namespace gate::cli {

namespace {

class HttpStorage : public cache::RemoteStorage {
public:
  HttpStorage(const config::CacheConfig& c, const Environment& env)
      : base_(c.remote.substr(0, c.remote.find_last_not_of('/') + 1)),
        origin_(c.remote, env, timeouts(c.remote_timeout_s), "cache entries and the cache token") {
    if (c.remote_auth_env.empty()) {
      no_token_ = "no token sent: cache.remote_auth_env is not set";
      return;
    }
    const std::string token = env.get(c.remote_auth_env);
    if (token.empty()) {
      no_token_ = "no token sent: $" + c.remote_auth_env + " is not set";
      return;
    }
    if (std::any_of(token.begin(), token.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      throw Error(Exit::bad_input,
                  "$" + c.remote_auth_env + " (cache.remote_auth_env) holds a control character");
    register_secret(token);
    headers_.emplace_back("authorization", "Bearer " + token);
    token_from_ = "the token from $" + c.remote_auth_env;
  }

  cache::RemoteReply get(const std::string& key) override {
    const model::ApiResponse r = request("GET", key, "");
    cache::RemoteReply out;
    if (r.status == 200) {
      out.outcome = cache::RemoteReply::Outcome::found;
      out.bytes = r.body;
    } else if (r.status == 404) {
      out.outcome = cache::RemoteReply::Outcome::absent;
    } else {
      out.error = "GET " + cache::entry_path(key) + ": " + why(r);
    }
    return out;
  }

  cache::RemoteReply put(const std::string& key, std::string_view bytes) override {
    const model::ApiResponse r = request("PUT", key, std::string(bytes));
    cache::RemoteReply out;
    if (r.status >= 200 && r.status < 300)
      out.outcome = cache::RemoteReply::Outcome::found;
    else
      out.error = "PUT " + cache::entry_path(key) + ": " + why(r);
    return out;
  }

  std::string where() const override { return base_; }

private:
  static net::Origin::Timeouts timeouts(double total_s) { return {std::min(2.0, total_s), total_s}; }

  // A request that could not even be made is a failure like a refused
  // one: RemoteStorage never throws.
  model::ApiResponse request(const std::string& method, const std::string& key,
                             const std::string& body) const {
    try {
      return origin_.request(method, "/" + cache::entry_path(key), headers_, body);
    } catch (const Error& e) {
      model::ApiResponse r;
      r.status = 0;
      r.body = redact(e.what());
      return r;
    }
  }

  // The status, never the body: a server's error page may echo the request.
  std::string why(const model::ApiResponse& r) const {
    if (r.status == 0) return r.body; // "timeout: ...", "connection: ...", "tls: ..."
    std::string out = "HTTP " + std::to_string(r.status);
    if (r.status == 401 || r.status == 403)
      out += no_token_.empty() ? " (" + token_from_ + " was refused)" : " (" + no_token_ + ")";
    return out;
  }

  std::string base_;
  net::Origin origin_;
  net::Headers headers_;
  std::string no_token_;   // why no token is sent, "" when one is
  std::string token_from_; // "the token from $VAR"
};

} // namespace

std::shared_ptr<cache::Remote> open_remote(const config::CacheConfig& c, const Environment& env) {
  if (c.remote.empty()) return nullptr;
  return std::make_shared<cache::Remote>(std::make_unique<HttpStorage>(c, env));
}

std::string remote_failure_text(const std::string& failure) {
  if (failure.empty()) return "";
  return "remote cache failed; gate stopped using it and went on from the cache "
         "directory and fresh calls: " +
         failure;
}

} // namespace gate::cli
