#pragma once

// Plain-HTTP helpers shared by the example agent and its scripted model.
// Only loopback http:// URLs: the agent talks to gate's proxy.

#include <string>

namespace example {

struct Url {
  std::string host, port, path; // path without a trailing '/'
};

// "http://host:port/path" → parts; throws std::runtime_error otherwise.
Url parse_url(const std::string& url);

struct Response {
  int status = 0;
  std::string body;
};

// One POST with a JSON body; throws std::runtime_error on a network error.
Response post_json(const Url& base, const std::string& path, const std::string& bearer,
                   const std::string& body);

// The scripted model: an OpenAI-compatible /chat/completions on
// 127.0.0.1:port that answers from the conversation alone (scripted_model.cpp).
// Serves until stdin closes.
int serve_model(unsigned short port);

} // namespace example
