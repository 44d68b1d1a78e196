// gate's example agent: a small tool-using agent that talks to an
// OpenAI-compatible chat completions API through $OPENAI_BASE_URL (gate
// points it at its proxy). It reads the task from stdin and offers the
// model two tools:
//   read_file(path)    → the text of a file in the working directory
//   write_answer(text) → writes answer.txt in the working directory
// and loops until the model answers without a tool call (at most 8 steps),
// then prints that answer. With `--task-file NAME` the task is read from
// that file instead of stdin. `gate-example-agent serve-model --port N` runs
// the scripted model the fixture cassette was recorded from instead.

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "http.hpp"

namespace example {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

Url parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("only http:// base URLs are supported: " + url);
  std::string rest = url.substr(scheme.size());
  std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  Url u;
  u.path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!u.path.empty() && u.path.back() == '/')
    u.path.pop_back();
  std::size_t colon = authority.rfind(':');
  u.host = authority.substr(0, colon);
  u.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  return u;
}

Response post_json(const Url& base, const std::string& path, const std::string& bearer,
                   const std::string& body) {
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  boost::beast::tcp_stream stream(io);
  stream.connect(resolver.resolve(base.host, base.port));
  http::request<http::string_body> req{http::verb::post, base.path + path, 11};
  req.set(http::field::host, base.host + ":" + base.port);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::authorization, "Bearer " + bearer);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res);
  boost::system::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return {static_cast<int>(res.result_int()), res.body()};
}

} // namespace example

namespace {

namespace json = boost::json;

json::array tool_schemas() {
  return json::parse(R"([
    {"type":"function","function":{"name":"read_file","description":"Read a text file in the working directory",
      "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
    {"type":"function","function":{"name":"write_answer","description":"Write the final answer to answer.txt",
      "parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}}
  ])")
      .as_array();
}

// Paths stay inside the working directory: no absolute paths, no "..".
bool safe_path(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part == "..") return false;
  return true;
}

std::string run_tool(const std::string& name, const json::object& args) {
  if (name == "read_file") {
    const auto* p = args.if_contains("path");
    if (p == nullptr || !p->is_string() || !safe_path(std::string(p->get_string())))
      return "error: read_file needs a relative path inside the working directory";
    std::ifstream in(std::string(p->get_string()), std::ios::binary);
    if (!in) return "error: no such file: " + std::string(p->get_string());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  if (name == "write_answer") {
    const auto* t = args.if_contains("text");
    if (t == nullptr || !t->is_string()) return "error: write_answer needs \"text\"";
    std::ofstream out("answer.txt", std::ios::binary | std::ios::trunc);
    out << std::string(t->get_string()); // the text itself, not its JSON form
    return out ? "ok" : "error: cannot write answer.txt";
  }
  return "error: unknown tool " + name;
}

int run_agent(const char* task_file) {
  const char* base = std::getenv("OPENAI_BASE_URL");
  const char* key = std::getenv("OPENAI_API_KEY");
  if (base == nullptr || key == nullptr) {
    std::cerr << "example agent: OPENAI_BASE_URL and OPENAI_API_KEY must be set\n";
    return 2;
  }
  const char* model = std::getenv("EXAMPLE_AGENT_MODEL");
  std::ostringstream task;
  if (task_file != nullptr) {
    std::ifstream in(task_file, std::ios::binary);
    if (!in) {
      std::cerr << "example agent: cannot read " << task_file << "\n";
      return 2;
    }
    task << in.rdbuf();
  } else {
    task << std::cin.rdbuf();
  }
  const example::Url url = example::parse_url(base);

  json::array messages;
  messages.push_back(
      {{"role", "system"},
       {"content", "You are a careful file assistant. Use the tools, then reply in one line."}});
  messages.push_back({{"role", "user"}, {"content", task.str()}});
  for (int step = 0; step < 8; ++step) {
    json::object body{{"model", model != nullptr ? model : "example-model"},
                      {"messages", messages},
                      {"tools", tool_schemas()},
                      {"temperature", 0}};
    example::Response r = example::post_json(url, "/chat/completions", key, json::serialize(body));
    if (r.status != 200) {
      std::cerr << "example agent: HTTP " << r.status << ": " << r.body << "\n";
      return 3;
    }
    json::value v = json::parse(r.body);
    const json::object& msg = v.at("choices").at(0).at("message").as_object();
    const auto* calls = msg.if_contains("tool_calls");
    if (calls == nullptr || !calls->is_array() || calls->as_array().empty()) {
      const auto* content = msg.if_contains("content");
      std::cout << (content != nullptr && content->is_string() ? std::string(content->get_string()) : "")
                << "\n";
      return 0;
    }
    messages.push_back(msg);
    for (const auto& c : calls->as_array()) {
      const auto& fn = c.at("function").as_object();
      const std::string name(fn.at("name").as_string());
      json::value args = json::parse(fn.at("arguments").as_string());
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", c.at("id")},
                          {"content", run_tool(name, args.is_object() ? args.as_object() : json::object{})}});
    }
  }
  std::cerr << "example agent: no answer after 8 steps\n";
  return 4;
}

} // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "serve-model") {
      unsigned short port = 18090;
      if (argc >= 4 && std::string(argv[2]) == "--port")
        port = static_cast<unsigned short>(std::stoi(argv[3]));
      return example::serve_model(port);
    }
    if (argc >= 3 && std::string(argv[1]) == "--task-file") return run_agent(argv[2]);
    return run_agent(nullptr);
  } catch (const std::exception& e) {
    std::cerr << "example agent: " << e.what() << "\n";
    return 5;
  }
}
