// End-to-end: a cache shared by runners through a real server (issue 20
// part 3). Debian's nginx with the dav module takes GET and PUT on
// 127.0.0.1, started by the test as a plain child process (no daemon, no
// master, everything in a temp directory); the test is skipped when nginx
// is not installed (.ci/deps --test installs it).
#include <doctest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <csignal>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_token = "gate-cache-token-canary-4b7d91e0c3";
const std::string k_token_var = "GATE_TEST_CACHE_TOKEN";

unsigned short free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

bool accepts(unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string nginx_binary() {
  for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// nginx serving <dir>/root with PUT, behind a bearer token check, on a free
// port of 127.0.0.1; killed at destruction.
class Nginx {
public:
  explicit Nginx(const fs::path& dir) : dir_(dir), port_(free_port()) {
    fs::create_directories(dir / "root");
    fs::create_directories(dir / "tmp");
    const std::string d = dir.string();
    spit(dir / "nginx.conf",
         "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + d + "/nginx.pid;\nerror_log " + d +
             "/error.log;\nevents { worker_connections 64; }\nhttp {\n  access_log " + d +
             "/access.log;\n  client_body_temp_path " + d + "/tmp;\n  proxy_temp_path " + d +
             "/tmp;\n  fastcgi_temp_path " + d + "/tmp;\n  uwsgi_temp_path " + d +
             "/tmp;\n  scgi_temp_path " + d +
             "/tmp;\n  client_max_body_size 64m;\n  server {\n    listen 127.0.0.1:" + std::to_string(port_) +
             ";\n    root " + d + "/root;\n    location / {\n      if ($http_authorization != \"Bearer " +
             k_token +
             "\") { return 401; }\n      dav_methods PUT;\n      create_full_put_path on;\n"
             "    }\n  }\n}\n");
    const std::string bin = nginx_binary();
    pid_ = ::fork();
    if (pid_ == 0) {
      int out = ::open((d + "/stdio.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(out, 2);
      // -e: the error log before the configuration is read (not /var/log).
      ::execl(bin.c_str(), bin.c_str(), "-p", d.c_str(), "-e", (d + "/error.log").c_str(), "-c",
              (d + "/nginx.conf").c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const bool up = wait_until([&] { return accepts(port_); }, std::chrono::seconds(10));
    if (!up) throw std::runtime_error("nginx did not start: " + slurp(dir / "stdio.log"));
  }
  ~Nginx() { kill(); }
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/gate"; }
  fs::path root() const { return dir_ / "root" / "gate"; }
  std::string access_log() const { return fs::exists(dir_ / "access.log") ? slurp(dir_ / "access.log") : ""; }

private:
  fs::path dir_;
  unsigned short port_;
  pid_t pid_ = -1;
};

gate::testing::Script demo_script() {
  return gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
}

// A runner: the demo in `dir` with an empty cache directory, sharing `url`.
fs::path runner(const fs::path& dir, const std::string& base_url, const std::string& mode,
                const std::string& url) {
  fs::create_directories(dir);
  fs::path config = copy_demo(dir);
  fs::remove_all(dir / "demo" / "cache");
  set_yaml(config, "base_url", base_url);
  set_yaml(config, "mode", mode + "\n  remote: " + url + "\n  remote_auth_env: " + k_token_var);
  return config;
}

Result run(const fs::path& config, const std::string& out, const std::string& token,
           const std::vector<std::string>& filters = {"math-*"}) {
  std::vector<std::string> args{"run", "--config", config.string(), "--quiet", "--out", out};
  for (const auto& f : filters) {
    args.push_back("--filter");
    args.push_back(f);
  }
  return run_gate(args, config.parent_path().parent_path(),
                  {{"GATE_DEMO_API_KEY", "sk-demo-unused"}, {k_token_var, token}});
}

std::vector<fs::path> entries_below(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& p : files_below(dir))
    if (p.extension() == ".entry") out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

// A base URL where nothing listens: a replay-only runner never calls it.
std::string nowhere() { return "http://127.0.0.1:" + std::to_string(free_port()) + "/v1"; }

} // namespace

TEST_CASE("two runners share one nginx cache; a flipped byte there is a miss, never served") {
  if (nginx_binary().empty()) {
    gate::testing::skip_test("nginx is not installed (.ci/deps --test installs it)");
    return;
  }
  TempDir tmp;
  Nginx nginx(tmp.path() / "nginx");
  gate::testing::FakeUpstream upstream(demo_script());
  upstream.start();

  // Runner A records through the upstream: its directory and the remote.
  fs::path a = runner(tmp.path() / "a", upstream.base_url(), "replay", nginx.url());
  Result rec = run(a, "out", k_token);
  INFO(rec.out << rec.err);
  REQUIRE(rec.exit_code == 0);
  REQUIRE(upstream.requests() == 33); // 11 math tasks x 3 runs
  CHECK(rec.out.find("remote cache: 0 hits, 33 misses, 33 puts") != std::string::npos);
  // The server holds exactly A's entries, at <key[0:2]>/<key>.entry.
  const std::vector<fs::path> local = entries_below(tmp.path() / "a" / "demo" / "cache");
  const std::vector<fs::path> shared = entries_below(nginx.root());
  REQUIRE(shared.size() == 33);
  REQUIRE(local.size() == 33);
  for (std::size_t i = 0; i < shared.size(); ++i) {
    CHECK(fs::relative(shared[i], nginx.root()) ==
          fs::relative(local[i], tmp.path() / "a" / "demo" / "cache"));
    CHECK(slurp(shared[i]) == slurp(local[i]));
  }

  // Runner B: nothing cached, nothing upstream, replay-only: all from the remote.
  fs::path b = runner(tmp.path() / "b", nowhere(), "replay-only", nginx.url());
  Result rep = run(b, "out", k_token);
  INFO(rep.out << rep.err);
  REQUIRE(rep.exit_code == 0);
  CHECK(rep.out.find("33 of 33 runs replayed; 0 errored; remote cache: 33 hits, 0 misses, 0 puts") !=
        std::string::npos);
  CHECK(rep.err.find("warning") == std::string::npos);
  const auto ra = read_json(tmp.path() / "a" / "out" / "report.json");
  const auto rb = read_json(tmp.path() / "b" / "out" / "report.json");
  CHECK(outcome_view(ra) == outcome_view(rb));
  CHECK(ra.at("stats").at("overall") == rb.at("stats").at("overall"));
  CHECK(entries_below(tmp.path() / "b" / "demo" / "cache").size() == 33); // kept locally

  // One byte of one answer flipped on the server (its checksum kept):
  // runner C misses it, says which, and never keeps it.
  const fs::path flipped = shared[5];
  std::string bytes = slurp(flipped);
  const std::size_t at = bytes.find("\\\"content\\\":\\\"") + 14;
  REQUIRE(at < bytes.size());
  bytes[at] = bytes[at] == 'x' ? 'y' : 'x';
  spit(flipped, bytes);
  fs::path c = runner(tmp.path() / "c", nowhere(), "replay-only", nginx.url());
  Result miss = run(c, "out", k_token);
  INFO(miss.out << miss.err);
  CHECK(miss.exit_code == 4);
  const std::string key = flipped.stem().string();
  CHECK(miss.err.find("gate: warning: corrupt cache entry treated as a miss: " + nginx.url() + "/" +
                      key.substr(0, 2) + "/" + key + ".entry: checksum mismatch") != std::string::npos);
  CHECK(miss.err.find("1 response(s) are not in the cache") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "c" / "demo" / "cache" / key.substr(0, 2) / (key + ".entry")));
  CHECK(entries_below(tmp.path() / "c" / "demo" / "cache").size() == 32);

  // A wrong token: one warning, and the run goes on from its own directory.
  Result wrong = run(b, "out2", "not-the-token");
  INFO(wrong.out << wrong.err);
  CHECK(wrong.exit_code == 0);
  // (B's directory holds everything: the remote is never asked.)
  CHECK(wrong.out.find("remote cache: 0 hits, 0 misses, 0 puts") != std::string::npos);
  fs::path d = runner(tmp.path() / "d", nowhere(), "replay-only", nginx.url());
  fs::copy(tmp.path() / "b" / "demo" / "cache", tmp.path() / "d" / "demo" / "cache",
           fs::copy_options::recursive);
  fs::remove(tmp.path() / "d" / "demo" / "cache" / fs::relative(shared[0], nginx.root()));
  Result refused = run(d, "out", "not-the-token");
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 4); // the one entry only the remote held is missing
  CHECK(refused.err.find("gate: warning: remote cache failed; gate stopped using it and went on from the "
                         "cache directory and fresh calls: " +
                         nginx.url() + ": GET ") != std::string::npos);
  CHECK(refused.err.find("HTTP 401 (the token from $" + k_token_var + " was refused)") != std::string::npos);
  Result unset = run(d, "out", "");
  CHECK(unset.err.find("HTTP 401 (no token sent: $" + k_token_var + " is not set)") != std::string::npos);

  // gate doctor reads a missing entry: answered with the token, refused without.
  Result doctor = run_gate({"doctor", "--config", d.string()}, tmp.path() / "d", {{k_token_var, k_token}});
  CHECK(doctor.out.find("ok    cache      cache.remote " + nginx.url() + " answers a GET") !=
        std::string::npos);
  Result doctor_refused =
      run_gate({"doctor", "--config", d.string()}, tmp.path() / "d", {{k_token_var, "not-the-token"}});
  CHECK(doctor_refused.out.find("FAIL  cache      cache.remote " + nginx.url() + ": GET 00/" +
                                std::string(64, '0') + ".entry: HTTP 401 (the token from $" + k_token_var +
                                " was refused)") != std::string::npos);
  CHECK(doctor_refused.exit_code == 3);

  // An answer rewritten on the server with its checksum recomputed
  // verifies; --trusted-cache holds it to the trusted copy as a local hit.
  const fs::path rewritten = shared[7];
  const std::string line = slurp(rewritten);
  const std::size_t content = line.find("\\\"content\\\":\\\"");
  REQUIRE(content != std::string::npos);
  const std::string from = line.substr(content, 17);
  rewrite_answer(rewritten, from, from.substr(0, 14) + "Zzz");
  fs::path t = runner(tmp.path() / "t", nowhere(), "replay-only", nginx.url());
  Result tampered = run_gate({"run", "--config", t.string(), "--quiet", "--out", "out", "--filter", "math-*",
                              "--trusted-cache", (tmp.path() / "a" / "demo" / "cache").string()},
                             tmp.path() / "t", {{k_token_var, k_token}});
  INFO(tampered.out << tampered.err);
  CHECK(tampered.exit_code == 2);
  const std::string tkey = rewritten.stem().string();
  CHECK(tampered.err.find("1 replayed cache entry differs from the trusted cache") != std::string::npos);
  CHECK(tampered.err.find(tkey.substr(0, 2) + "/" + tkey + ".entry (task \"") != std::string::npos);
  // The message names where the forged entry came from, not the branch...
  CHECK(tampered.err.find("served by the remote cache " + nginx.url()) != std::string::npos);
  CHECK(tampered.err.find("restore these entries from the base branch") == std::string::npos);
  // ...and the refused entry is not left in cache.dir for a later run to
  // serve: without the remote and without --trusted-cache it is a miss.
  const fs::path local_copy = tmp.path() / "t" / "demo" / "cache" / tkey.substr(0, 2) / (tkey + ".entry");
  CHECK_FALSE(fs::exists(local_copy));
  CHECK(entries_below(tmp.path() / "t" / "demo" / "cache").size() > 0); // the verified ones stay
  set_yaml(t, "remote", nowhere());
  Result later = run(t, "out-later", "");
  INFO(later.out << later.err);
  CHECK(later.exit_code == 4);
  const std::size_t named = tampered.err.find(".entry (task \"");
  REQUIRE(named != std::string::npos);
  const std::string task_run = tampered.err.substr(named + 14, tampered.err.find(',', named) - named - 14);
  CHECK(later.err.find("missing: task " + task_run.substr(0, task_run.find('"')) +
                       task_run.substr(task_run.find('"') + 1)) != std::string::npos);

  std::string printed;
  for (const Result* r : {&rec, &rep, &miss, &wrong, &refused, &unset, &doctor, &tampered, &later})
    printed += r->out + r->err;
  for (const char* dir : {"a", "b", "c", "d", "t"})
    CHECK(no_canary_in(tmp.path() / dir, printed, k_token));
  CHECK(nginx.access_log().find(k_token) == std::string::npos);
}

TEST_CASE(
    "the server going away mid-run: the run goes on from the cache directory and fresh calls, and says so") {
  if (nginx_binary().empty()) {
    gate::testing::skip_test("nginx is not installed (.ci/deps --test installs it)");
    return;
  }
  TempDir tmp;
  Nginx nginx(tmp.path() / "nginx");
  gate::testing::Script script = demo_script();
  gate::testing::FakeUpstream recorder(script);
  recorder.start();
  fs::path a = runner(tmp.path() / "a", recorder.base_url(), "replay", nginx.url());
  REQUIRE(run(a, "out", k_token).exit_code == 0);

  // Runner E has A's directory and records two more tasks, each fresh call
  // slow; the server is killed once E has asked it for the first of them.
  script.latency_ms = 200;
  gate::testing::FakeUpstream slow(script);
  slow.start();
  fs::path e = runner(tmp.path() / "e", slow.base_url(), "replay", nginx.url());
  fs::copy(tmp.path() / "a" / "demo" / "cache", tmp.path() / "e" / "demo" / "cache",
           fs::copy_options::recursive);
  set_yaml(e, "concurrency", "1");
  Child child =
      spawn_gate({"run", "--config", e.string(), "--quiet", "--out", "out", "--filter", "math-*", "--filter",
                  "cls-billing-*"},
                 tmp.path() / "e", {{"GATE_DEMO_API_KEY", "sk-demo-unused"}, {k_token_var, k_token}});
  const bool asked = wait_until([&] { return nginx.access_log().find("GET /gate/") != std::string::npos; });
  nginx.kill();
  Result r = finish(child);
  INFO(r.out << r.err);
  REQUIRE(asked);
  CHECK(r.exit_code == 0);
  CHECK(slow.requests() == 6); // 2 tasks x 3 runs, all fresh
  const std::string warning =
      "gate: warning: remote cache failed; gate stopped using it and went on from the "
      "cache directory and fresh calls: " +
      nginx.url() + ": ";
  const std::size_t first = r.err.find(warning);
  CHECK(first != std::string::npos);
  CHECK(r.err.find(warning, first + 1) == std::string::npos); // said once
  CHECK(r.out.find("; 0 errored; remote cache: ") != std::string::npos);
  CHECK(r.out.find(" (then off)") != std::string::npos);
  const auto report = read_json(tmp.path() / "e" / "out" / "report.json");
  CHECK(report.at("stats").at("cache_hits").as_int64() == 33);
  CHECK(report.at("stats").at("errored_runs").as_int64() == 0);
  CHECK(entries_below(tmp.path() / "e" / "demo" / "cache").size() == 39); // all recorded locally
}

TEST_CASE("gate check: a remote nobody answers at is a warning in the verdict, and the gate still judges") {
  // No nginx needed: nothing listens at the remote's port, so the first
  // lookup fails and the runs go to the (fake) model instead.
  TempDir tmp;
  gate::testing::FakeUpstream upstream(demo_script());
  upstream.start();
  const std::string dead = "http://127.0.0.1:" + std::to_string(free_port()) + "/gate";
  fs::path config = runner(tmp.path(), upstream.base_url(), "replay", dead);
  Result r = run_gate({"check", "--config", config.string(), "--baseline",
                       (source_dir() / "baselines" / "demo.json").string(), "--out", "out", "--quiet"},
                      tmp.path(), {{"GATE_DEMO_API_KEY", "sk-demo-unused"}, {k_token_var, k_token}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("gate passed") != std::string::npos);
  CHECK(upstream.requests() == 132); // every run fresh: the remote was off after its first failure
  const std::string said = "remote cache failed; gate stopped using it and went on from the cache directory";
  CHECK(slurp(tmp.path() / "out" / "verdict.md").find(said) != std::string::npos);
  const auto verdict = read_json(tmp.path() / "out" / "verdict.json");
  bool warned = false;
  for (const auto& w : verdict.at("warnings").as_array())
    warned = warned || std::string(w.as_string()).find(said) != std::string::npos;
  CHECK(warned);
  for (const char* f : {"verdict.md", "verdict.json", "report.json"})
    CHECK(slurp(tmp.path() / "out" / f).find(k_token) == std::string::npos);
}
