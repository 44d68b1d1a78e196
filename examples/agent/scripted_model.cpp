// The scripted model behind fixtures/agents' cassette: an OpenAI-compatible
// chat completions endpoint whose answer depends only on the conversation,
// so a recording can be made again byte for byte. It plays a model that
// reads the file the task names, computes what the task asks for and
// writes it with write_answer, then says "done: <answer>".

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "http.hpp"

namespace example {

namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    out.push_back(line);
  return out;
}

bool has(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

// The first word that looks like a file name ("notes.txt").
std::string file_named(const std::string& task) {
  std::stringstream ss(task);
  std::string w;
  while (ss >> w) {
    while (!w.empty() && (w.back() == '.' || w.back() == ',' || w.back() == ':' || w.back() == '"'))
      w.pop_back();
    while (!w.empty() && w.front() == '"')
      w.erase(0, 1);
    std::size_t dot = w.find('.');
    if (dot != std::string::npos && dot > 0 && dot + 1 < w.size() &&
        std::isalpha(static_cast<unsigned char>(w[dot + 1])))
      return w;
  }
  return "";
}

std::string answer_for(const std::string& task, const std::string& file, const std::string& content) {
  const auto lines = lines_of(content);
  // Most specific first: "summarize" contains "sum", "first line in
  // uppercase" contains "first line".
  if (has(task, "json")) {
    json::object o{{"file", file}, {"lines", lines.size()}, {"first", lines.empty() ? "" : lines.front()}};
    return json::serialize(o);
  }
  if (has(task, "uppercase")) {
    std::string up = lines.empty() ? "" : lines.front();
    std::transform(up.begin(), up.end(), up.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return up;
  }
  if (has(task, "first line")) return lines.empty() ? "" : lines.front();
  if (has(task, "last line")) return lines.empty() ? "" : lines.back();
  if (has(task, "count the lines")) return std::to_string(lines.size());
  if (has(task, "count the words")) {
    std::stringstream ss(content);
    std::string w;
    std::size_t n = 0;
    while (ss >> w)
      ++n;
    return std::to_string(n);
  }
  if (has(task, "sum")) {
    long long sum = 0;
    std::stringstream ss(content);
    std::string w;
    while (ss >> w)
      try {
        sum += std::stoll(w);
      } catch (const std::exception&) {
      }
    return std::to_string(sum);
  }
  if (has(task, "sort")) {
    auto sorted = lines;
    std::sort(sorted.begin(), sorted.end());
    std::string out;
    for (const auto& l : sorted)
      out += l + "\n";
    return out;
  }
  if (has(task, "longest line")) {
    std::string best;
    for (const auto& l : lines)
      if (l.size() > best.size()) best = l;
    return best;
  }
  return content;
}

json::object tool_call_message(const std::string& id, const std::string& name, const json::object& args) {
  json::object fn{{"name", name}, {"arguments", json::serialize(args)}};
  json::array calls;
  calls.push_back(json::object{{"id", id}, {"type", "function"}, {"function", fn}});
  return {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}};
}

// The next assistant message for a conversation.
json::object next_message(const json::array& messages) {
  std::string task;
  for (const auto& m : messages)
    if (m.at("role") == "user") {
      task = std::string(m.at("content").as_string());
      break;
    }
  const json::object& last = messages.back().as_object();
  const std::string step = std::to_string(messages.size());
  if (last.at("role") != "tool") {
    std::string file = file_named(task);
    if (file.empty())
      return {{"role", "assistant"},
              {"content", has(task, "hello") ? "hello from the example model" : "nothing to do"}};
    return tool_call_message("call_" + step, "read_file", {{"path", file}});
  }
  // The tool result answers the assistant message before it.
  const json::object& asked = messages[messages.size() - 2].as_object();
  const auto& fn = asked.at("tool_calls").at(0).at("function");
  const std::string tool(fn.at("name").as_string());
  json::value args = json::parse(fn.at("arguments").as_string());
  const std::string result(last.at("content").as_string());
  if (tool == "read_file") {
    if (result.rfind("error:", 0) == 0)
      return {{"role", "assistant"}, {"content", "cannot complete: " + result}};
    std::string file(args.at("path").as_string());
    return tool_call_message("call_" + step, "write_answer", {{"text", answer_for(task, file, result)}});
  }
  std::string text(args.at("text").as_string());
  std::string first = lines_of(text).empty() ? "" : lines_of(text).front();
  return {{"role", "assistant"}, {"content", "done: " + first}};
}

std::string completion(const json::object& request) {
  const json::array& messages = request.at("messages").as_array();
  json::object msg = next_message(messages);
  const bool tools = msg.contains("tool_calls");
  std::size_t words = 0;
  for (const auto& m : messages)
    if (const auto* c = m.as_object().if_contains("content"); c != nullptr && c->is_string())
      words += std::count(c->as_string().begin(), c->as_string().end(), ' ') + 1;
  json::object out{
      {"id", "chatcmpl-" + std::to_string(messages.size())},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", request.at("model")},
      {"choices", json::array{json::object{
                      {"index", 0}, {"message", msg}, {"finish_reason", tools ? "tool_calls" : "stop"}}}},
      {"usage", {{"prompt_tokens", words + 3}, {"completion_tokens", 12}, {"total_tokens", words + 15}}}};
  return json::serialize(out);
}

void serve(tcp::socket sock) {
  boost::beast::flat_buffer buf;
  boost::system::error_code ec;
  for (;;) {
    http::request<http::string_body> req;
    http::read(sock, buf, req, ec);
    if (ec) return;
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/json");
    try {
      std::string target(req.target());
      if (req.method() != http::verb::post || target.size() < 17 ||
          target.substr(target.size() - 17) != "/chat/completions")
        throw std::runtime_error("only POST .../chat/completions");
      res.body() = completion(json::parse(req.body()).as_object());
    } catch (const std::exception& e) {
      res.result(http::status::bad_request);
      res.body() = json::serialize(
          json::object{{"error", {{"type", "invalid_request_error"}, {"message", e.what()}}}});
    }
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(sock, res, ec);
    if (ec || !req.keep_alive()) return;
  }
}

} // namespace

int serve_model(unsigned short port) {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  std::cout << "scripted model listening on 127.0.0.1:" << acceptor.local_endpoint().port() << std::endl;
  std::thread([&] {
    for (;;) {
      tcp::socket sock(io);
      boost::system::error_code ec;
      acceptor.accept(sock, ec);
      if (ec) return;
      std::thread(serve, std::move(sock)).detach();
    }
  }).detach();
  std::string ignored;
  while (std::getline(std::cin, ignored)) {
  }
  std::_Exit(0); // connection threads are detached; nothing to flush
}

} // namespace example
