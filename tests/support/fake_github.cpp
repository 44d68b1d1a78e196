#include "fake_github.hpp"

#include <map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <cctype>
#include <mutex>
#include <regex>
#include <thread>

#include <gate/util/error.hpp>

namespace gate::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct FakeGithub::Impl {
  FakeGithubOptions options;
  mutable std::mutex mutex; // guards comments, log, next_id, write_status, sockets
  std::vector<GithubComment> comments;
  std::vector<RequestLog> log;
  std::int64_t next_id = 1000;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  unsigned short port = 0;
  bool stopping = false;
  std::thread accept_thread;
  std::vector<std::thread> connections;
  std::vector<std::shared_ptr<tcp::socket>> sockets;

  http::response<http::string_body> handle(const http::request<http::string_body>& req) {
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "application/json");
    auto reply = [&](int status, boost::json::value body) {
      res.result(static_cast<unsigned>(status));
      res.body() = boost::json::serialize(body);
    };
    std::lock_guard lock(mutex);
    RequestLog entry{std::string(req.method_string()), std::string(req.target()), req.body(), {}};
    for (const auto& f : req) {
      std::string name(f.name_string());
      for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      entry.headers[name] = std::string(f.value());
    }
    log.push_back(entry);
    if (req[http::field::authorization] != "Bearer " + options.token) {
      reply(401, {{"message", "Bad credentials"}});
      return res;
    }
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    std::smatch m;
    static const std::regex list_re("^/repos/[^/]+/[^/]+/issues/([0-9]+)/comments$");
    static const std::regex edit_re("^/repos/[^/]+/[^/]+/issues/comments/([0-9]+)$");
    static const std::regex pull_re("^/repos/[^/]+/[^/]+/pulls/([0-9]+)$");
    if (std::regex_match(path, m, pull_re) && req.method() == http::verb::get) {
      const auto head = pr_heads.find(std::stoll(m[1]));
      if (head == pr_heads.end())
        reply(404, {{"message", "Not Found"}});
      else
        reply(200, {{"number", head->first}, {"head", {{"sha", head->second}}}});
      return res;
    }
    std::string text;
    if (req.method() != http::verb::get) {
      try {
        text = std::string(boost::json::parse(req.body()).at("body").as_string());
      } catch (const std::exception&) {
        reply(400, {{"message", "Problems parsing JSON"}});
        return res;
      }
      if (write_status_ != 0) {
        reply(write_status_, {{"message", "Resource not accessible by integration"}});
        return res;
      }
      std::size_t chars = 0;
      for (unsigned char c : text)
        chars += (c & 0xC0) != 0x80 ? 1 : 0;
      if (chars > options.max_body_chars) {
        reply(422, {{"message", "Validation Failed"},
                    {"errors", boost::json::array{{{"resource", "IssueComment"},
                                                   {"field", "body"},
                                                   {"message", "Body is too long (maximum is " +
                                                                   std::to_string(options.max_body_chars) +
                                                                   " characters)"}}}}});
        return res;
      }
    }
    if (std::regex_match(path, m, list_re) && req.method() == http::verb::get) {
      const std::int64_t pr = std::stoll(m[1]);
      std::size_t page = 1;
      static const std::regex page_re("[?&]page=([0-9]+)");
      if (std::smatch pm; std::regex_search(target, pm, page_re)) page = std::stoul(pm[1]);
      std::vector<const GithubComment*> mine;
      for (const auto& c : comments)
        if (c.pr == pr) mine.push_back(&c);
      boost::json::array items;
      for (std::size_t i = (page - 1) * options.page_size; i < mine.size() && i < page * options.page_size;
           ++i)
        items.push_back({{"id", mine[i]->id}, {"body", mine[i]->body}, {"user", {{"login", "someone"}}}});
      if (page * options.page_size < mine.size())
        res.set(http::field::link, "<http://127.0.0.1:" + std::to_string(port) + path +
                                       "?per_page=100&page=" + std::to_string(page + 1) + ">; rel=\"next\"");
      reply(200, items);
    } else if (std::regex_match(path, m, list_re) && req.method() == http::verb::post) {
      comments.push_back({next_id++, std::stoll(m[1]), text});
      reply(201, {{"id", comments.back().id}, {"body", text}});
    } else if (std::regex_match(path, m, edit_re) && req.method() == http::verb::patch) {
      const std::int64_t id = std::stoll(m[1]);
      for (auto& c : comments)
        if (c.id == id) {
          c.body = text;
          reply(200, {{"id", id}, {"body", text}});
          return res;
        }
      reply(404, {{"message", "Not Found"}});
    } else {
      reply(404, {{"message", "Not Found"}});
    }
    return res;
  }

  void serve(std::shared_ptr<tcp::socket> socket) {
    beast::flat_buffer buffer;
    beast::error_code ec;
    for (;;) {
      http::request<http::string_body> req;
      http::read(*socket, buffer, req, ec);
      if (ec) return;
      auto res = handle(req);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(*socket, res, ec);
      if (ec || !req.keep_alive()) return;
    }
  }

  int write_status_ = 0;
  std::map<std::int64_t, std::string> pr_heads;
};

FakeGithub::FakeGithub(FakeGithubOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->write_status_ = impl_->options.write_status;
}

FakeGithub::~FakeGithub() { stop(); }

void FakeGithub::start() {
  Impl& s = *impl_;
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  s.acceptor.open(endpoint.protocol());
  s.acceptor.bind(endpoint);
  s.acceptor.listen();
  s.port = s.acceptor.local_endpoint().port();
  s.accept_thread = std::thread([&s] {
    for (;;) {
      auto socket = std::make_shared<tcp::socket>(s.ioc);
      beast::error_code ec;
      s.acceptor.accept(*socket, ec);
      std::lock_guard lock(s.mutex);
      if (s.stopping) return;
      if (ec) continue;
      s.sockets.push_back(socket);
      s.connections.emplace_back([&s, socket] { s.serve(socket); });
    }
  });
}

void FakeGithub::stop() {
  Impl& s = *impl_;
  if (!s.accept_thread.joinable()) return;
  {
    std::lock_guard lock(s.mutex);
    s.stopping = true;
    beast::error_code ec;
    for (auto& socket : s.sockets)
      socket->shutdown(tcp::socket::shutdown_both, ec);
  }
  // Wake the blocking accept with a connection of our own.
  {
    tcp::socket wake(s.ioc);
    beast::error_code ec;
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.port), ec);
  }
  s.accept_thread.join();
  for (auto& t : s.connections)
    t.join();
  s.connections.clear();
}

std::string FakeGithub::api_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

void FakeGithub::set_write_status(int status) {
  std::lock_guard lock(impl_->mutex);
  impl_->write_status_ = status;
}

void FakeGithub::set_pr_head(std::int64_t pr, const std::string& sha) {
  std::lock_guard lock(impl_->mutex);
  impl_->pr_heads[pr] = sha;
}

void FakeGithub::add_comment(std::int64_t pr, const std::string& body) {
  std::lock_guard lock(impl_->mutex);
  impl_->comments.push_back({impl_->next_id++, pr, body});
}

std::vector<GithubComment> FakeGithub::comments() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->comments;
}

std::vector<RequestLog> FakeGithub::log() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->log;
}

} // namespace gate::testing
