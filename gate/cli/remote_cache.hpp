#pragma once

// `cache.remote`: the shared second level of the cache over HTTP(S), with
// plain GET and PUT of <url>/<key[0:2]>/<key>.entry (the layout of a cache
// directory, so nginx's dav module, any WebDAV server, or an object store
// behind a proxy that takes PUT hold one as files).

#include <memory>
#include <string>

#include <gate/cache/remote.hpp>
#include <gate/config/config.hpp>
#include <gate/util/environment.hpp>

namespace gate::cli {

// The remote level of `c`, or null when cache.remote is not set. The token
// (the value of cache.remote_auth_env in `env`) is registered for
// redaction and sent as "Authorization: Bearer <token>"; it is never in a
// message. Throws Error(bad_input) when the URL is malformed or the token
// holds a control character, Error(cannot_run) for plain http to a host
// not allowed (net::fetch's rule).
std::shared_ptr<cache::Remote> open_remote(const config::CacheConfig& c, const Environment& env);

// What gate says once when the remote failed (cache::Remote::failure());
// "" for "".
std::string remote_failure_text(const std::string& failure);

} // namespace gate::cli
