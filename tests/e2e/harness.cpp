#include "harness.hpp"

#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace gate::e2e {

namespace fs = std::filesystem;

Child spawn_gate(const std::vector<std::string>& args, const fs::path& cwd,
                 const std::map<std::string, std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (name == "CI" || name == "GITHUB_ACTIONS" || name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY" ||
        env.count(name) != 0)
      continue;
    env_strings.push_back(kv);
  }
  for (const auto& [k, v] : env)
    if (!v.empty()) env_strings.push_back(k + "=" + v);
  // gate has no write-fault seam of its own: a test that asks for one gets
  // the preloaded shim that makes the C library's calls fail. Under ASan
  // the shim comes before the sanitizer's runtime, which ASan must be told
  // is fine.
  if (env.count("GATE_TEST_FAULT_WRITE") != 0) {
    env_strings.push_back(std::string("LD_PRELOAD=") + GATE_FAULT_WRITE_LIB);
    const char* asan = std::getenv("ASAN_OPTIONS");
    std::erase_if(env_strings, [](const std::string& e) { return e.starts_with("ASAN_OPTIONS="); });
    env_strings.push_back(std::string("ASAN_OPTIONS=") +
                          (asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "") +
                          "verify_asan_link_order=0");
  }
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{gate_binary()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  return Child{pid, out_pipe[0], err_pipe[0]};
}

Result finish(Child& child) {
  Result r;
  pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

Result run_gate(const std::vector<std::string>& args, const fs::path& cwd,
                const std::map<std::string, std::string>& env) {
  Child c = spawn_gate(args, cwd, env);
  return finish(c);
}

Result sh(const fs::path& dir, const std::string& command) {
  const std::string full = "cd " + gate::shell_quote(dir.string()) +
                           " && env -u GITHUB_STEP_SUMMARY -u GITHUB_ACTIONS -u GITHUB_OUTPUT sh -c " +
                           gate::shell_quote(command) + " 2>&1";
  Result r;
  FILE* p = ::popen(full.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed for " + command);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr)
    r.out += buf;
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
}

const std::string& gate_binary() {
  static const std::string path = [] {
    const char* v = std::getenv("GATE_TEST_BINARY");
    return std::string(v != nullptr && *v != '\0' ? v : GATE_BINARY);
  }();
  return path;
}

fs::path source_dir() { return GATE_SOURCE_DIR; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

boost::json::value read_json(const fs::path& p) { return boost::json::parse(slurp(p)); }

std::vector<fs::path> files_below(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

void rewrite_answer(const fs::path& entry, const std::string& from, const std::string& to) {
  const std::string text = slurp(entry);
  const std::size_t first_nl = text.find('\n');
  const std::size_t second_nl = first_nl == std::string::npos ? first_nl : text.find('\n', first_nl + 1);
  if (second_nl == std::string::npos) throw std::runtime_error(entry.string() + ": not a cache entry");
  std::string signed_part = text.substr(0, second_nl + 1);
  const std::size_t at = signed_part.find(from);
  if (at == std::string::npos) throw std::runtime_error(entry.string() + ": no " + from);
  signed_part.replace(at, from.size(), to);
  spit(entry, signed_part + "sha256 " + gate::sha256_hex(signed_part) + "\n");
}

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

fs::path copy_demo(const fs::path& dir) {
  fs::copy(source_dir() / "fixtures" / "demo", dir / "demo", fs::copy_options::recursive);
  return dir / "demo" / "gate.yaml";
}

void set_yaml(const fs::path& file, const std::string& key, const std::string& value) {
  std::string text = slurp(file);
  std::size_t at = text.find("  " + key + ":");
  if (at == std::string::npos) {
    at = text.find("\n" + key + ":");
    if (at == std::string::npos) throw std::runtime_error(file.string() + ": no key " + key);
    ++at;
  }
  std::size_t end = text.find('\n', at);
  std::string indent = text.substr(at, text.find_first_not_of(' ', at) - at);
  text.replace(at, end - at, indent + key + ": " + value);
  spit(file, text);
}

namespace {
// base64 of the first 9 characters of `s` (3 groups of 3 bytes).
std::string base64_prefix(const std::string& s) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i + 3 <= std::min<std::size_t>(s.size(), 9); i += 3) {
    unsigned v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 | (unsigned char)s[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6)
      out.push_back(k[(v >> shift) & 63]);
  }
  return out;
}
} // namespace

bool no_canary_in(const fs::path& dir, const std::string& printed, const std::string& canary) {
  const std::string tail = canary.substr(canary.size() - 8);
  const std::string encoded = base64_prefix(canary);
  auto clean = [&](const std::string& s) {
    return s.find(canary) == std::string::npos && s.find(tail) == std::string::npos &&
           s.find(encoded) == std::string::npos;
  };
  bool ok = true;
  for (const auto& f : files_below(dir))
    if (!clean(slurp(f))) {
      std::fprintf(stderr, "secret found in %s\n", f.string().c_str());
      ok = false;
    }
  return ok && clean(printed);
}

boost::json::array outcome_view(const boost::json::value& report) {
  boost::json::array out;
  for (const auto& t : report.at("tasks").as_array()) {
    boost::json::object task = t.as_object();
    boost::json::array runs;
    for (const auto& r : task.at("runs").as_array()) {
      boost::json::object run = r.as_object();
      for (const char* field : {"latency_ms", "cache_hit", "attempts", "attempt_log", "ttft_ms"})
        run.erase(field);
      runs.push_back(run);
    }
    task["runs"] = runs;
    task.erase("stats");
    out.push_back(task);
  }
  return out;
}

} // namespace gate::e2e
